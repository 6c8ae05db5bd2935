package io.idemkey.config;

import io.idemkey.FailureMode;
import io.idemkey.IdempotencyKey;
import io.idemkey.core.IdempotencyPolicy;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PolicyResolverTest {

    public static class Plain {
        @IdempotencyKey
        public void create() {
        }

        public void notGuarded() {
        }
    }

    @IdempotencyKey(ttlHours = 48, lockTtlSeconds = 60, required = false, excludeFields = "ClassField")
    public static class ClassLevel {
        public void create() {
        }

        @IdempotencyKey(ttlHours = 2, lockTtlSeconds = 10, excludeFields = {"Nonce", "clientTimestamp"},
                failureMode = FailureMode.OPEN, inFlightWaitSeconds = 5)
        public void special() {
        }
    }

    public static class InheritsClassLevel extends ClassLevel {
        public void update() {
        }
    }

    public static class BadAnnotations {
        @IdempotencyKey(ttlHours = -1)
        public void negativeTtl() {
        }

        @IdempotencyKey(ttlHours = 1, lockTtlSeconds = 3600)
        public void lockAsLongAsTtl() {
        }

        @IdempotencyKey(ttlHours = 1, lockTtlSeconds = 3599)
        public void lockJustShorterThanTtl() {
        }

        @IdempotencyKey(lockTtlSeconds = 0)
        public void zeroLock() {
        }

        @IdempotencyKey(inFlightWaitSeconds = 61)
        public void waitTooLong() {
        }

        @IdempotencyKey(excludeFields = {"ok", " "})
        public void blankExcludedField() {
        }
    }

    /** A shared API contract (the interface a MicroProfile Rest Client uses too). */
    public interface Contract {
        @jakarta.ws.rs.POST
        @IdempotencyKey(ttlHours = 7)
        void onInterfaceMethod();

        @jakarta.ws.rs.POST
        void plain();
    }

    @IdempotencyKey(ttlHours = 9)
    public interface GuardedContract {
        @jakarta.ws.rs.POST
        void anyMethod();
    }

    public static class Implementation implements Contract, GuardedContract {
        @Override
        public void onInterfaceMethod() {
        }

        @Override
        @IdempotencyKey(ttlHours = 3)
        public void plain() {
        }

        @Override
        public void anyMethod() {
        }

        public void notInAContract() {
        }
    }

    private final Map<String, String> config = new HashMap<>();

    private PolicyResolver resolver() {
        ConfigLookup lookup = ConfigLookup.of(config);
        return new PolicyResolver(lookup, IdempotencySettings.from(lookup));
    }

    private static Method method(Class<?> type, String name) {
        try {
            return type.getMethod(name);
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    private IdempotencyPolicy resolve(Class<?> type, String method) {
        return resolver().resolve(type, method(type, method)).orElseThrow();
    }

    private ConfigurationException refused(Class<?> type, String method, String property) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> resolve(type, method));
        assertEquals(property, e.property(), e.getMessage());
        assertTrue(e.getMessage().contains(property), e.getMessage());
        return e;
    }

    private static String onMethod(Class<?> type, String method, String member) {
        return type.getName() + "/" + method + "/IdempotencyKey/" + member;
    }

    private static String onClass(Class<?> type, String member) {
        return type.getName() + "/IdempotencyKey/" + member;
    }

    private static String global(String member) {
        return "IdempotencyKey/" + member;
    }

    @Test
    void annotationDefaultsGiveTheDocumentedPolicy() {
        IdempotencyPolicy policy = resolve(Plain.class, "create");
        assertEquals(new IdempotencyPolicy(Duration.ofHours(24), Duration.ofSeconds(30), true, Set.of(), false, Duration.ZERO),
                policy);
        assertEquals(Duration.ofSeconds(10), policy.renewalInterval());
    }

    @Test
    void methodWithoutAnnotationInAnUnannotatedClassIsNotGuarded() {
        assertEquals(Optional.empty(), resolver().resolve(Plain.class, method(Plain.class, "notGuarded")));
    }

    @Test
    void annotationOnTheImplementationTheInterfaceMethodOrTheInterfaceGuards() throws Exception {
        assertEquals(Duration.ofHours(3), resolve(Implementation.class, "plain").ttl(), "on the implementing method");
        assertEquals(Duration.ofHours(7), resolve(Implementation.class, "onInterfaceMethod").ttl(), "on the interface method");
        assertEquals(Duration.ofHours(7), resolver().resolve(Implementation.class,
                Contract.class.getMethod("onInterfaceMethod")).orElseThrow().ttl(), "as a runtime may report the method");
        assertEquals(Duration.ofHours(9), resolve(Implementation.class, "anyMethod").ttl(), "on the interface");
        assertEquals(Optional.empty(), resolver().resolve(Implementation.class, method(Implementation.class, "notInAContract")));
        config.put(onMethod(Implementation.class, "onInterfaceMethod", "ttlHours"), "5");
        assertEquals(Duration.ofHours(5), resolve(Implementation.class, "onInterfaceMethod").ttl(),
                "overrides name the implementation class");
    }

    @Test
    void classLevelAnnotationAppliesToEveryMethod() {
        IdempotencyPolicy policy = resolve(ClassLevel.class, "create");
        assertEquals(Duration.ofHours(48), policy.ttl());
        assertEquals(Duration.ofSeconds(60), policy.lockTtl());
        assertFalse(policy.required());
        assertEquals(Set.of("classfield"), policy.excludeFields());
    }

    @Test
    void methodAnnotationWinsOverTheClassAnnotation() {
        IdempotencyPolicy policy = resolve(ClassLevel.class, "special");
        assertEquals(Duration.ofHours(2), policy.ttl());
        assertEquals(Duration.ofSeconds(10), policy.lockTtl());
        assertTrue(policy.required());
        assertEquals(Set.of("nonce", "clienttimestamp"), policy.excludeFields(), "lower-cased");
        assertTrue(policy.failOpen());
        assertEquals(Duration.ofSeconds(5), policy.inFlightWait());
    }

    @Test
    void classAnnotationIsInheritedBySubclassesAndAppliesToInheritedMethods() {
        assertEquals(Duration.ofHours(48), resolve(InheritsClassLevel.class, "update").ttl());
        assertEquals(Duration.ofHours(48), resolve(InheritsClassLevel.class, "create").ttl());
    }

    @Test
    void overridesApplyMostSpecificFirst() {
        assertEquals(Duration.ofSeconds(60), resolve(ClassLevel.class, "create").lockTtl(), "annotation");
        config.put(global("lockTtlSeconds"), "11");
        assertEquals(Duration.ofSeconds(11), resolve(ClassLevel.class, "create").lockTtl(), "global");
        config.put(onClass(ClassLevel.class, "lockTtlSeconds"), "12");
        assertEquals(Duration.ofSeconds(12), resolve(ClassLevel.class, "create").lockTtl(), "class");
        config.put(onMethod(ClassLevel.class, "create", "lockTtlSeconds"), "13");
        assertEquals(Duration.ofSeconds(13), resolve(ClassLevel.class, "create").lockTtl(), "method");
        assertEquals(Duration.ofSeconds(12), resolve(ClassLevel.class, "special").lockTtl(),
                "the method override is for create only; the class override beats special's annotation");
        assertEquals(Duration.ofSeconds(11), resolve(Plain.class, "create").lockTtl(), "other classes see the global one");
    }

    @Test
    void configOverridesWinOverAMethodAnnotation() {
        config.put(global("ttlHours"), "72");
        assertEquals(Duration.ofHours(72), resolve(ClassLevel.class, "special").ttl());
    }

    @Test
    void everyMemberCanBeOverridden() {
        config.put(onMethod(Plain.class, "create", "ttlHours"), "1");
        config.put(onMethod(Plain.class, "create", "lockTtlSeconds"), "5");
        config.put(onMethod(Plain.class, "create", "required"), "false");
        config.put(onMethod(Plain.class, "create", "excludeFields"), "Nonce, clientTimestamp");
        config.put(onMethod(Plain.class, "create", "failureMode"), "open");
        config.put(onMethod(Plain.class, "create", "inFlightWaitSeconds"), "3");
        assertEquals(new IdempotencyPolicy(Duration.ofHours(1), Duration.ofSeconds(5), false, Set.of("nonce", "clienttimestamp"),
                true, Duration.ofSeconds(3)), resolve(Plain.class, "create"));
    }

    @Test
    void failureModeDefaultFollowsTheGlobalSettingAndExplicitModesWin() {
        config.put(IdempotencySettings.FAILURE_MODE, "open");
        assertTrue(resolve(Plain.class, "create").failOpen());
        config.put(onClass(Plain.class, "failureMode"), "CLOSED");
        assertFalse(resolve(Plain.class, "create").failOpen());
    }

    @Test
    void negativeTtlIsRefusedNamingTheProperty() {
        config.put(global("ttlHours"), "-1");
        refused(Plain.class, "create", global("ttlHours"));
    }

    @Test
    void negativeTtlInTheAnnotationIsRefusedNamingTheMethodAndMember() {
        ConfigurationException e = refused(BadAnnotations.class, "negativeTtl",
                BadAnnotations.class.getName() + ".negativeTtl @IdempotencyKey(ttlHours)");
        assertTrue(e.getMessage().contains("ttlHours"), e.getMessage());
    }

    @Test
    void lockTtlNotShorterThanTtlIsRefused() {
        refused(BadAnnotations.class, "lockAsLongAsTtl", BadAnnotations.class.getName() + ".lockAsLongAsTtl @IdempotencyKey(lockTtlSeconds)");
        assertEquals(Duration.ofSeconds(3599), resolve(BadAnnotations.class, "lockJustShorterThanTtl").lockTtl());

        config.put(onMethod(Plain.class, "create", "ttlHours"), "1");
        config.put(onClass(Plain.class, "lockTtlSeconds"), "3600");
        ConfigurationException e = refused(Plain.class, "create", onClass(Plain.class, "lockTtlSeconds"));
        assertTrue(e.getMessage().contains(onMethod(Plain.class, "create", "ttlHours")), e.getMessage());
    }

    @Test
    void outOfRangeValuesAreRefused() {
        refused(BadAnnotations.class, "zeroLock", BadAnnotations.class.getName() + ".zeroLock @IdempotencyKey(lockTtlSeconds)");
        refused(BadAnnotations.class, "waitTooLong", BadAnnotations.class.getName() + ".waitTooLong @IdempotencyKey(inFlightWaitSeconds)");
        config.put(global("ttlHours"), "8761");
        refused(Plain.class, "create", global("ttlHours"));
        config.clear();
        config.put(global("lockTtlSeconds"), "86401");
        refused(Plain.class, "create", global("lockTtlSeconds"));
        config.clear();
        config.put(global("inFlightWaitSeconds"), "-1");
        refused(Plain.class, "create", global("inFlightWaitSeconds"));
    }

    @Test
    void nonNumericNumbersAreRefusedNamingTheProperty() {
        config.put(onMethod(Plain.class, "create", "ttlHours"), "one day");
        refused(Plain.class, "create", onMethod(Plain.class, "create", "ttlHours"));
        config.clear();
        config.put(onClass(Plain.class, "lockTtlSeconds"), "30s");
        refused(Plain.class, "create", onClass(Plain.class, "lockTtlSeconds"));
    }

    @Test
    void badBooleanAndUnknownFailureModeAreRefusedNamingTheProperty() {
        config.put(global("required"), "yes");
        refused(Plain.class, "create", global("required"));
        config.clear();
        config.put(global("failureMode"), "sometimes");
        refused(Plain.class, "create", global("failureMode"));
    }

    @Test
    void blankExcludedFieldIsRefused() {
        refused(BadAnnotations.class, "blankExcludedField",
                BadAnnotations.class.getName() + ".blankExcludedField @IdempotencyKey(excludeFields)");
    }

    @Test
    void policyItselfRefusesInconsistentValues() {
        assertThrows(IllegalArgumentException.class, () ->
                new IdempotencyPolicy(Duration.ofSeconds(30), Duration.ofSeconds(30), true, Set.of(), false, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () ->
                new IdempotencyPolicy(Duration.ofHours(1), Duration.ZERO, true, Set.of(), false, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () ->
                new IdempotencyPolicy(Duration.ofHours(1), Duration.ofSeconds(1), true, Set.of(), false, Duration.ofSeconds(-1)));
    }
}
