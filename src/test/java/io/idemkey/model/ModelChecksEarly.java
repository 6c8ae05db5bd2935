package io.idemkey.model;

import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Starts {@link ProtocolModelTest}'s model checks as a test run that contains it begins (registered
 * in {@code META-INF/services}): spin then runs, at the lowest CPU priority, beside the other test
 * classes, most of which spend their time waiting on real stores, instead of after them on both
 * cores for minutes. A run without that class (one test, the fuzz or OpenAPI 4 executions) starts
 * nothing.
 */
public final class ModelChecksEarly implements TestExecutionListener {

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        if (plan.getRoots().stream().flatMap(root -> plan.getDescendants(root).stream()).anyMatch(ModelChecksEarly::isModelTest)) {
            ProtocolModelTest.startChecks();
        }
    }

    private static boolean isModelTest(TestIdentifier test) {
        return test.getSource().filter(ClassSource.class::isInstance)
                .map(source -> ((ClassSource) source).getClassName().equals(ProtocolModelTest.class.getName()))
                .orElse(false);
    }
}
