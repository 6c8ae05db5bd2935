package io.idemkey.cdi;

import io.idemkey.config.ConfigurationException;
import io.idemkey.config.IdempotencySettings.Resources;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.enterprise.util.TypeLiteral;
import jakarta.inject.Named;
import jakarta.transaction.TransactionSynchronizationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.spi.InitialContextFactory;
import javax.sql.DataSource;
import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where {@link PlatformResources} takes each resource from, per {@code idempotency.resources}: the
 * application's beans (a CDI of this test's, asked through {@code CDI.current()}) and JNDI (an
 * initial context of this test's), each look-up recorded.
 */
class PlatformResourcesTest {

    private static final String REGISTRY = "java:comp/TransactionSynchronizationRegistry";
    private static final String THREADS = "java:comp/DefaultManagedThreadFactory";

    /** The beans by type and qualifier ({@code javax.sql.DataSource@Named(orders)}, {@code ...@Default}). */
    private static final Map<String, List<Supplier<Object>>> BEANS = new HashMap<>();
    private static final Map<String, Object> JNDI = new HashMap<>();
    private static final List<String> ASKED_CDI = new ArrayList<>();
    private static final List<String> ASKED_JNDI = new ArrayList<>();

    private final DataSource beanDataSource = proxy(DataSource.class);
    private final DataSource jndiDataSource = proxy(DataSource.class);

    @BeforeAll
    static void fakes() {
        CDI.setCDIProvider(FakeCdi::new);
    }

    @BeforeEach
    void clean() {
        BEANS.clear();
        JNDI.clear();
        ASKED_CDI.clear();
        ASKED_JNDI.clear();
        System.setProperty(Context.INITIAL_CONTEXT_FACTORY, FakeJndi.class.getName());
    }

    @AfterEach
    void noJndi() {
        System.clearProperty(Context.INITIAL_CONTEXT_FACTORY);
    }

    @Test
    void cdiTakesTheNamedDataSourceBeanTheRegistryAndTheThreadFactoryAndNeverLooksUpJndi() {
        ManagedThreadFactory threads = proxy(ManagedThreadFactory.class);
        TransactionSynchronizationRegistry registry = proxy(TransactionSynchronizationRegistry.class);
        bean(DataSource.class, "@Named(orders)", beanDataSource);
        bean(TransactionSynchronizationRegistry.class, "@Default", registry);
        bean(ManagedThreadFactory.class, "@Default", threads);
        everythingInJndi();
        PlatformResources cdi = new PlatformResources(Resources.CDI);

        PlatformResources.Found<DataSource> dataSource = cdi.dataSource("orders");
        assertSame(beanDataSource, dataSource.resource());
        assertEquals("DataSource @Named(\"orders\") from CDI", dataSource.origin());
        PlatformResources.Found<TransactionSynchronizationRegistry> found = cdi.optional(TransactionSynchronizationRegistry.class, REGISTRY);
        assertSame(registry, found.resource());
        assertEquals("TransactionSynchronizationRegistry from CDI", found.origin());
        PlatformResources.Found<ThreadFactory> factory = cdi.optional(ManagedThreadFactory.class.getName(), ThreadFactory.class, THREADS);
        assertSame(threads, factory.resource());
        assertEquals("ManagedThreadFactory from CDI", factory.origin());
        assertEquals(List.of(), ASKED_JNDI);
    }

    @Test
    void cdiWithoutOneDataSourceBeanFailsNamingThePropertyAndTheBeanWantedWithoutLookingUpJndi() {
        everythingInJndi();
        PlatformResources cdi = new PlatformResources(Resources.CDI);
        ConfigurationException none = assertThrows(ConfigurationException.class, () -> cdi.dataSource("orders"));
        assertEquals("idempotency.jdbc.datasource", none.property());
        assertEquals("Invalid Idemkey configuration: idempotency.jdbc.datasource is 'orders', and the application has no"
                + " CDI bean javax.sql.DataSource @Named(\"orders\") (idempotency.resources=cdi: CDI beans only, no JNDI"
                + " look-up)", none.getMessage());

        bean(DataSource.class, "@Default", beanDataSource);
        bean(DataSource.class, "@Default", proxy(DataSource.class));
        ConfigurationException two = assertThrows(ConfigurationException.class, () -> cdi.dataSource(null));
        assertTrue(two.getMessage().startsWith("Invalid Idemkey configuration: idempotency.jdbc.datasource is not set,"
                + " and the application has more than one CDI bean javax.sql.DataSource @Default"), two.getMessage());
        assertEquals(List.of(), ASKED_JNDI);
    }

    @Test
    void cdiTakesTheDefaultDataSourceBeanWhereNoNameIsSet() {
        bean(DataSource.class, "@Default", beanDataSource);
        PlatformResources.Found<DataSource> found = new PlatformResources(Resources.CDI).dataSource(null);
        assertSame(beanDataSource, found.resource());
        assertEquals("DataSource @Default from CDI", found.origin());
    }

    @Test
    void cdiWithoutTheOptionalBeansFindsNoneAndSaysWhatItLookedFor() {
        everythingInJndi();
        PlatformResources cdi = new PlatformResources(Resources.CDI);
        PlatformResources.Found<TransactionSynchronizationRegistry> registry = cdi.optional(TransactionSynchronizationRegistry.class, REGISTRY);
        assertNull(registry.resource());
        assertEquals("the application has no CDI bean jakarta.transaction.TransactionSynchronizationRegistry @Default;"
                + " idempotency.resources=cdi: no JNDI look-up", registry.origin());
        PlatformResources.Found<ThreadFactory> absentApi = cdi.optional("jakarta.enterprise.concurrent.NoSuchFactory",
                ThreadFactory.class, THREADS);
        assertNull(absentApi.resource());
        assertTrue(absentApi.origin().startsWith("no jakarta.enterprise.concurrent.NoSuchFactory API here"), absentApi.origin());
        assertEquals(List.of(), ASKED_JNDI);
    }

    /** Every deployment made before the setting existed: no such bean, so the JNDI name, as before. */
    @Test
    void autoLooksUpTheJndiNameWhereNoBeanResolvesOrItCannotBeCreated() {
        everythingInJndi();
        PlatformResources auto = new PlatformResources(Resources.AUTO);
        PlatformResources.Found<DataSource> dataSource = auto.dataSource("jdbc/orders");
        assertSame(jndiDataSource, dataSource.resource());
        assertEquals("DataSource jdbc/orders from JNDI", dataSource.origin());
        assertEquals(List.of("javax.sql.DataSource@Named(jdbc/orders)"), ASKED_CDI, "the bean of that name was looked for first");

        bean(TransactionSynchronizationRegistry.class, "@Default", proxy(TransactionSynchronizationRegistry.class));
        bean(TransactionSynchronizationRegistry.class, "@Default", proxy(TransactionSynchronizationRegistry.class));
        assertEquals("TransactionSynchronizationRegistry from JNDI (" + REGISTRY + ")",
                auto.optional(TransactionSynchronizationRegistry.class, REGISTRY).origin(), "two beans: none resolves");
        BEANS.put(ManagedThreadFactory.class.getName() + "@Default", List.of(() -> {
            throw new IllegalStateException("not here");
        }));
        assertSame(JNDI.get(THREADS), auto.optional(ManagedThreadFactory.class.getName(), ThreadFactory.class, THREADS).resource());
        assertEquals(List.of("jdbc/orders", REGISTRY, THREADS), ASKED_JNDI);
    }

    /** The application meant a bean it offers for Idemkey: passing it over for JNDI is said, never silent. */
    @Test
    void autoWarnsWhereItPassesOverABeanTheApplicationOffersButNotWhereThereIsNone() {
        everythingInJndi();
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(PlatformResources.class.getName());
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                if (record.getLevel() == java.util.logging.Level.WARNING) {
                    warnings.add(record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(handler);
        try {
            PlatformResources auto = new PlatformResources(Resources.AUTO);
            auto.dataSource("jdbc/orders");
            auto.optional(TransactionSynchronizationRegistry.class, REGISTRY);
            assertEquals(List.of(), warnings, "no bean at all: JNDI, as on a server without such beans");

            BEANS.put(DataSource.class.getName() + "@Named(jdbc/orders)", List.of(() -> {
                throw new IllegalStateException("the pool did not start");
            }));
            bean(TransactionSynchronizationRegistry.class, "@Default", proxy(TransactionSynchronizationRegistry.class));
            bean(TransactionSynchronizationRegistry.class, "@Default", proxy(TransactionSynchronizationRegistry.class));
            assertSame(jndiDataSource, auto.dataSource("jdbc/orders").resource());
            auto.optional(TransactionSynchronizationRegistry.class, REGISTRY);
            assertEquals(2, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains("could not be had") && warnings.get(0).contains("the pool did not start")
                    && warnings.get(0).contains("DataSource jdbc/orders in JNDI instead"), warnings.get(0));
            assertTrue(warnings.get(1).contains("more than one CDI bean"), warnings.get(1));
        } finally {
            log.removeHandler(handler);
        }
    }

    @Test
    void autoTakesTheBeanWhereOneResolves() {
        bean(DataSource.class, "@Named(orders)", beanDataSource);
        everythingInJndi();
        assertSame(beanDataSource, new PlatformResources(Resources.AUTO).dataSource("orders").resource());
        assertEquals(List.of(), ASKED_JNDI);
    }

    @Test
    void autoWithNeitherFailsNamingThePropertyAndBothLookUps() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> new PlatformResources(Resources.AUTO).dataSource("jdbc/orders"));
        assertEquals("idempotency.jdbc.datasource", e.property());
        assertTrue(e.getMessage().contains("names no DataSource the application can look up: 'jdbc/orders'"), e.getMessage());
        assertTrue(e.getMessage().contains("the application has no CDI bean javax.sql.DataSource @Named(\"jdbc/orders\")"),
                e.getMessage());
    }

    @Test
    void jndiNeverAsksCdi() {
        bean(DataSource.class, "@Named(jdbc/orders)", beanDataSource);
        bean(TransactionSynchronizationRegistry.class, "@Default", proxy(TransactionSynchronizationRegistry.class));
        everythingInJndi();
        PlatformResources jndi = new PlatformResources(Resources.JNDI);
        assertSame(jndiDataSource, jndi.dataSource("jdbc/orders").resource());
        assertSame(JNDI.get(REGISTRY), jndi.optional(TransactionSynchronizationRegistry.class, REGISTRY).resource());
        assertEquals(List.of(), ASKED_CDI);
        JNDI.clear();
        PlatformResources.Found<ThreadFactory> none = jndi.optional(ManagedThreadFactory.class.getName(), ThreadFactory.class, THREADS);
        assertNull(none.resource());
        assertTrue(none.origin().startsWith("none at " + THREADS), none.origin());
    }

    private void everythingInJndi() {
        JNDI.put("jdbc/orders", jndiDataSource);
        JNDI.put(REGISTRY, proxy(TransactionSynchronizationRegistry.class));
        JNDI.put(THREADS, proxy(ManagedThreadFactory.class));
    }

    private static void bean(Class<?> type, String qualifier, Object instance) {
        BEANS.computeIfAbsent(type.getName() + qualifier, k -> new ArrayList<>()).add(() -> instance);
    }

    private static <T> T proxy(Class<T> type) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type}, (self, method, args) ->
                method.getName().equals("toString") ? type.getSimpleName() + "@" + System.identityHashCode(self) : null));
    }

    /** The application's beans: {@link #BEANS}; every selection recorded in {@link #ASKED_CDI}. */
    static final class FakeCdi extends CDI<Object> {

        @Override
        public BeanManager getBeanManager() {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U> Instance<U> select(Class<U> type, Annotation... qualifiers) {
            String qualifier = qualifiers.length == 0 ? "@Default" : "@Named(" + ((Named) qualifiers[0]).value() + ")";
            ASKED_CDI.add(type.getName() + qualifier);
            return new Selected<>(type, BEANS.getOrDefault(type.getName() + qualifier, List.of()));
        }

        @Override
        public Instance<Object> select(Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U> Instance<U> select(TypeLiteral<U> type, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isUnsatisfied() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isAmbiguous() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void destroy(Object instance) {
        }

        @Override
        public Handle<Object> getHandle() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Iterable<? extends Handle<Object>> handles() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Iterator<Object> iterator() {
            throw new UnsupportedOperationException();
        }
    }

    private record Selected<T>(Class<T> type, List<Supplier<Object>> beans) implements Instance<T> {

        @Override
        public boolean isUnsatisfied() {
            return beans.isEmpty();
        }

        @Override
        public boolean isAmbiguous() {
            return beans.size() > 1;
        }

        @Override
        public T get() {
            if (beans.size() != 1) {
                throw new IllegalStateException("not one bean");
            }
            return type.cast(beans.get(0).get());
        }

        @Override
        public Instance<T> select(Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends T> Instance<U> select(Class<U> subtype, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <U extends T> Instance<U> select(TypeLiteral<U> subtype, Annotation... qualifiers) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void destroy(T instance) {
        }

        @Override
        public Handle<T> getHandle() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Iterable<? extends Handle<T>> handles() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Iterator<T> iterator() {
            throw new UnsupportedOperationException();
        }
    }

    /** JNDI: {@link #JNDI}; every look-up recorded in {@link #ASKED_JNDI}. */
    public static final class FakeJndi implements InitialContextFactory {

        @Override
        public Context getInitialContext(Hashtable<?, ?> environment) {
            return (Context) Proxy.newProxyInstance(Context.class.getClassLoader(), new Class<?>[]{Context.class},
                    (self, method, args) -> {
                        if (method.getName().equals("lookup") && args[0] instanceof String name) {
                            ASKED_JNDI.add(name);
                            Object bound = JNDI.get(name);
                            if (bound == null) {
                                throw new NameNotFoundException(name);
                            }
                            return bound;
                        }
                        return null;
                    });
        }
    }
}
