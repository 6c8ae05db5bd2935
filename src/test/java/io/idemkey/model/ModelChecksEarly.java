package io.idemkey.model;

import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Starts {@link ProtocolModelTest}'s model checks as a test run that contains them begins
 * (registered in {@code META-INF/services}): spin then runs, at the lowest CPU priority, beside the
 * other test classes, most of which spend their time waiting on real stores, instead of after them
 * on both cores for minutes. A run without the checks (another test alone, the class's revision
 * test alone, the fuzz execution) starts nothing. When surefire hands a JVM one class at a time
 * (more than one fork), each class is a run of its own, and the checks start when their class runs.
 */
public final class ModelChecksEarly implements TestExecutionListener {

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        if (plan.getRoots().stream().flatMap(root -> plan.getDescendants(root).stream()).anyMatch(ModelChecksEarly::isTheChecks)) {
            ProtocolModelTest.startChecks();
        }
    }

    private static boolean isTheChecks(TestIdentifier test) {
        return test.getSource().filter(MethodSource.class::isInstance).map(MethodSource.class::cast)
                .map(source -> source.getClassName().equals(ProtocolModelTest.class.getName())
                        && source.getMethodName().equals(ProtocolModelTest.CHECKS_METHOD))
                .orElse(false);
    }
}
