package io.idemkey.cdi;

import io.idemkey.Idempotent;
import io.idemkey.config.ConfigLookup;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.config.PolicyResolver;
import io.idemkey.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where {@code @Idempotent} can be honoured; everywhere else the deployment fails, naming the method. */
class IdempotentMethodTest {

    @SuppressWarnings("unused")
    static class Placements {
        @Idempotent
        public List<String> sound(String other, @Idempotent.Key String key) {
            return List.of();
        }

        @Idempotent
        public String noKey(String key) {
            return key;
        }

        @Idempotent
        public String twoKeys(@Idempotent.Key String a, @Idempotent.Key String b) {
            return a;
        }

        public String keyOnly(@Idempotent.Key String key) {
            return key;
        }

        @Idempotent
        private String hidden(@Idempotent.Key String key) {
            return key;
        }

        @Idempotent
        public final String sealed(@Idempotent.Key String key) {
            return key;
        }

        @Idempotent
        public static String shared(@Idempotent.Key String key) {
            return key;
        }

        @Idempotent
        public CompletableFuture<String> later(@Idempotent.Key String key) {
            return null;
        }

        @Idempotent
        public <T> T anything(@Idempotent.Key String key) {
            return null;
        }

        public String plain(String key) {
            return key;
        }
    }

    private static Optional<String> misplaced(String name) {
        for (var method : Placements.class.getDeclaredMethods()) {
            if (method.getName().equals(name)) {
                return IdempotentMethod.misplaced(method);
            }
        }
        throw new AssertionError(name);
    }

    @Test
    void aPublicInstanceMethodWithOneKeyParameterIsSound() throws Exception {
        assertEquals(Optional.empty(), misplaced("sound"));
        assertEquals(Optional.empty(), misplaced("plain"));
        ConfigLookup none = ConfigLookup.of(Map.of());
        IdempotentMethod sound = IdempotentMethod.resolve(Placements.class.getMethod("sound", String.class, String.class),
                new PolicyResolver(none, IdempotencySettings.from(none)));
        assertEquals(1, sound.keyIndex());
        assertEquals(List.of("other"), sound.otherArguments(new Object[]{"other", "key"}));
        assertEquals("java.util.List<java.lang.String>", sound.resultType().getTypeName());
    }

    @Test
    void everyPlacementThatWouldRunUnguardedIsNamed() {
        String type = Placements.class.getName();
        assertTrue(misplaced("noKey").orElseThrow().startsWith("@Idempotent on " + type + ".noKey(), which has no parameter marked"));
        assertTrue(misplaced("twoKeys").orElseThrow().contains("which has 2 parameters marked @Idempotent.Key"));
        assertTrue(misplaced("keyOnly").orElseThrow().startsWith("@Idempotent.Key on a parameter of " + type
                + ".keyOnly(), which is not @Idempotent"));
        for (String cannotBeIntercepted : List.of("hidden", "sealed", "shared")) {
            assertTrue(misplaced(cannotBeIntercepted).orElseThrow().contains("private, static or final"), cannotBeIntercepted);
        }
        assertTrue(misplaced("later").orElseThrow().contains("which returns CompletableFuture"));
        assertTrue(misplaced("anything").orElseThrow().contains("returns the type variable T"));
    }

    @SuppressWarnings("unused")
    static class Scopes {
        @Idempotent
        public String unpinned(@Idempotent.Key String key) {
            return key;
        }

        @Idempotent(scope = "payments")
        public String pinned(@Idempotent.Key String key) {
            return key;
        }
    }

    @RegisterExtension
    final LogCapture deployment = new LogCapture(IdempotencyExtension.class.getName());

    /** The scope a method gets by default is its names: the deployment warns of each, naming the method and the scope. */
    @Test
    void eachMethodWhoseScopeIsNotPinnedIsWarnedOfWithTheScopeItGets() throws Exception {
        ConfigLookup none = ConfigLookup.of(Map.of());
        PolicyResolver resolver = new PolicyResolver(none, IdempotencySettings.from(none));
        Map<Method, IdempotentMethod> methods = new HashMap<>();
        for (String name : List.of("unpinned", "pinned")) {
            Method method = Scopes.class.getMethod(name, String.class);
            methods.put(method, IdempotentMethod.resolve(method, resolver));
        }
        IdempotencyExtension.warnOfUnpinnedScopes(methods);
        String type = Scopes.class.getName();
        assertEquals(1, deployment.records().size(), deployment.messages().toString());
        LogRecord warning = deployment.records().get(0);
        assertEquals(Level.WARNING, warning.getLevel());
        assertTrue(warning.getMessage().startsWith("Idemkey: @Idempotent on " + type + ".unpinned() has no scope, so its"
                + " records are kept under the scope " + type + ".unpinned,"), warning.getMessage());
        assertTrue(warning.getMessage().contains("Pin the scope: @Idempotent(scope = \"" + type + ".unpinned\")"),
                warning.getMessage());
    }
}
