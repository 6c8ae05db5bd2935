package io.idemkey.cdi;

import io.idemkey.request.CurrentRequest;
import io.idemkey.config.AdminSettings;
import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.config.PolicyResolver;
import io.idemkey.core.ExecutorScheduler;
import io.idemkey.core.Fingerprint;
import io.idemkey.core.GuardedEndpoint;
import io.idemkey.core.IdempotencyEngine;
import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyPolicy;
import io.idemkey.core.IdempotentCalls;
import io.idemkey.core.RequestTracer;
import io.idemkey.core.TimedStore;
import io.idemkey.resource.ResourceMethods;
import io.idemkey.core.RecordAdmin;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.store.jdbc.ExpiredRowsCleanup;
import io.idemkey.store.jdbc.JdbcIdempotencyStore;
import io.idemkey.store.jdbc.JdbcStoreOptions;
import io.idemkey.store.jdbc.UnsupportedDatabaseException;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.store.redis.RedisIdempotencyStore;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;

import javax.sql.DataSource;
import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Idemkey inside one application: the settings, the store, the engine and the resolved policies,
 * created once at start-up from MicroProfile Config and closed at shutdown.
 */
@ApplicationScoped
public class IdempotencyRuntime {

    private static final Logger LOG = Logger.getLogger(IdempotencyRuntime.class.getName());
    /** The TTL a completed record's age is computed from: the annotations' default, 24 hours. */
    private static final Duration ADMIN_DEFAULT_TTL = Duration.ofHours(24);
    private static final String MANAGED_THREADS = "java:comp/DefaultManagedThreadFactory";
    /** Loaded by name: a server without Jakarta Concurrency has no such class. */
    private static final String MANAGED_THREAD_FACTORY = "jakarta.enterprise.concurrent.ManagedThreadFactory";
    /** The leases' pool: the lease ticker and the renewal calls it hands out (at most four at once), nothing else. */
    private static final int LEASE_THREADS = 5;
    /**
     * The other background work's pool: store calls after a transaction ended, completions and
     * releases the store did not take tried again, the JDBC cleanup, a cluster's topology refreshes;
     * none of it can hold up a lease renewal.
     */
    private static final int WORK_THREADS = 8;
    /** How long stopping waits for the store calls already handed to the work pool. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);

    @Inject
    IdempotencyExtension extension;

    @Inject
    CurrentRequest currentRequest;

    /** MicroProfile Metrics, Micrometer: where the server has them (a bean is skipped where it does not). */
    @Inject
    @Any
    Instance<IdempotencyMetrics.Exporter> exporters;

    /** MicroProfile Telemetry, where the server has it. */
    @Inject
    @Any
    Instance<RequestTracer> tracers;

    private IdempotencySettings settings;
    private PolicyResolver policies;
    private IdempotencyStore store;
    private IdempotencyEngine engine;
    private Fingerprint fingerprint;
    private RequestTracer tracer;
    private boolean onManagedThreads;
    private ScheduledThreadPoolExecutor leasePool;
    private ScheduledThreadPoolExecutor workPool;
    private ExecutorScheduler workScheduler;
    private ExecutorScheduler scheduler;
    private Transactions transactions = Transactions.NONE;
    private IdempotentCalls calls;
    private Jsonb jsonb;
    private TransactionalStoreCalls callStoreCalls;
    private CompletionWithEffects completionWithEffects;
    private AdminSettings adminSettings = AdminSettings.DISABLED;
    private RecordAdmin recordAdmin;
    private final Map<Method, IdempotentMethod> idempotentMethods = new ConcurrentHashMap<>();
    private final Map<ResourceMethod, IdempotencyPolicy> resolved = new ConcurrentHashMap<>();

    /** Policies depend on the resource class too (annotation, configuration keys): an inherited method is shared. */
    private record ResourceMethod(Class<?> resourceClass, Method method) {
    }

    @PostConstruct
    void start() {
        try {
            startAll();
        } catch (RuntimeException | Error e) { // CDI calls no @PreDestroy then: stop the pools and the store here
            if (e instanceof ConfigurationException) {
                // a server may show only the container's wrapper of what a @PostConstruct threw (Payara Micro does)
                LOG.severe(e.getMessage());
            }
            stop();
            throw e;
        }
    }

    private void startAll() {
        ConfigLookup config = ConfigLookup.microProfile();
        settings = extension.settings().orElseGet(() -> IdempotencySettings.from(config));
        policies = new PolicyResolver(config, settings);
        PlatformResources resources = new PlatformResources(settings.resources());
        List<String> origins = new ArrayList<>(); // where each platform resource came from, for the line below
        ThreadFactory threads = backgroundThreads(resources, origins);
        leasePool = pool(LEASE_THREADS, threads);
        workPool = pool(WORK_THREADS, threads);
        workScheduler = new ExecutorScheduler(workPool);
        store = openStore(settings, workPool, resources, origins);
        if (settings.rateLimit().isPresent() && !store.countsRequests()) {
            throw new ConfigurationException(IdempotencySettings.RATE_LIMIT_PER_KEY, "is set, but the store " + store
                    + " does not count requests (IdempotencyStore.countsRequests())");
        }
        if (settings.rateLimit().isPresent() && store instanceof JdbcIdempotencyStore jdbc) {
            jdbc.keepCountsOnRelease(); // a key released before any counted acquire of this instance keeps its count
        }
        scheduler = new ExecutorScheduler(leasePool);
        IdempotencyMetrics.Exporter exporter = exporter(exporters);
        tracer = optional(tracers, "MicroProfile Telemetry", "decisions are not added to spans").orElse(RequestTracer.NONE);
        engine = IdempotencyEngine.builder(exporter == IdempotencyMetrics.Exporter.NONE ? store : new TimedStore(store, exporter),
                        scheduler)
                .retries(workScheduler) // a completion the store did not take: never in the leases' pool
                .metrics(new IdempotencyMetrics(exporter))
                .unavailableRetryAfter(settings.unavailableRetryAfter())
                .conflictRetryAfterMax(settings.conflictRetryAfterMax())
                .maxStoredResponseBytes(settings.maxResponseBytes())
                .replayCacheBytes(settings.replayCacheBytes())
                .rateLimit(settings.rateLimit().orElse(null))
                .logFormat(settings.logFormat())
                .codec(settings.protection().codec())
                .identifiers(settings.protection().identifiers())
                .recordsFromBefore(settings.protection().readsRecordsFromBefore())
                .build();
        if (settings.protection().identifiers().hashes() && !settings.protection().readsRecordsFromBefore()) {
            LOG.warning("Idemkey keeps records under hashed keys" + (settings.protection().codec().encrypts() ? ", encrypted" : "")
                    + ": records written before that was turned on are not looked for, so a retry of such a request runs"
                    + " again. When turning it on over a store that holds records, set"
                    + " idempotency.encryption.read-unencrypted=true for ttlHours (docs/security.md).");
        }
        if (store instanceof RedisIdempotencyStore redis) {
            redis.whenNotReplicated(() -> engine.metrics().count(IdempotencyMetrics.Event.NOT_REPLICATED, "redis"));
        }
        if (store instanceof JdbcIdempotencyStore table && !settings.jdbc().cleanupInterval().isZero()) {
            workScheduler.everyInterval(settings.jdbc().cleanupInterval(),
                    new ExpiredRowsCleanup(table, settings.jdbc().cleanupBatchSize(), engine.metrics(), workScheduler));
        }
        transactions = jta(resources, origins);
        fingerprint = new Fingerprint();
        jsonb = JsonbBuilder.create();
        calls = new IdempotentCalls(engine, fingerprint, jsonb, settings.keyPrefix(), settings.maxKeyLength());
        completionWithEffects = new CompletionWithEffects(transactions, store);
        callStoreCalls = new TransactionalStoreCalls(transactions, store, completionWithEffects, workScheduler,
                settings.unavailableRetryAfter());
        adminSettings = extension.admin().orElseGet(() -> AdminSettings.from(config));
        if (adminSettings.enabled()) {
            if (!(store instanceof StoreInspection inspection)) {
                throw new ConfigurationException(AdminSettings.ENABLED, "is true, but the store " + store
                        + " offers no inspection (io.idemkey.spi.StoreInspection)");
            }
            recordAdmin = new RecordAdmin(inspection, settings.keyPrefix(), settings.protection().identifiers(),
                    settings.protection().codec(), ADMIN_DEFAULT_TTL, Clock.systemUTC(), engine::forgetReplay);
            LOG.info(() -> "Idemkey's admin API is on, under " + adminSettings.path() + ", for the role "
                    + adminSettings.role());
        }
        if (store instanceof RedisIdempotencyStore redis) {
            checkPermissions(redis, settings, adminSettings.enabled());
        }
        LOG.info(() -> "Idemkey started: " + settings + ", resources: " + String.join(", ", origins));
    }

    /**
     * Every exporter the server can serve (MicroProfile Metrics, a Micrometer registry), one if it
     * is one; where none is, one line says why.
     */
    private static IdempotencyMetrics.Exporter exporter(Instance<IdempotencyMetrics.Exporter> beans) {
        List<IdempotencyMetrics.Exporter> usable = new ArrayList<>();
        List<String> notUsable = new ArrayList<>();
        for (Instance.Handle<IdempotencyMetrics.Exporter> handle : beans.handles()) {
            try {
                usable.add(IdempotencyMetrics.Exporter.guarded(handle.get()));
            } catch (RuntimeException | LinkageError e) {
                notUsable.add(e.toString());
            }
        }
        if (usable.isEmpty()) {
            LOG.info(() -> "Idemkey: neither MicroProfile Metrics nor a Micrometer MeterRegistry is "
                    + (notUsable.isEmpty() ? "available on this server" : "usable here " + notUsable)
                    + ": its counters are in the readiness check's data only");
            return IdempotencyMetrics.Exporter.NONE;
        }
        return usable.size() == 1 ? usable.get(0) : new IdempotencyMetrics.Exporter() {
            @Override
            public void count(IdempotencyMetrics.Event event, String endpoint) {
                usable.forEach(exporter -> exporter.count(event, endpoint));
            }

            @Override
            public void count(IdempotencyMetrics.Event event, String endpoint, long times) {
                usable.forEach(exporter -> exporter.count(event, endpoint, times));
            }

            @Override
            public void storeCall(String operation, Duration took) {
                usable.forEach(exporter -> exporter.storeCall(operation, took));
            }

            @Override
            public void inFlight(LongSupplier executionsHoldingALease) {
                usable.forEach(exporter -> exporter.inFlight(executionsHoldingALease));
            }
        };
    }

    /**
     * The bean of an optional platform part, or empty (logged once, at INFO) where the server lacks
     * it or does not let the application see its API (the bean then fails as it is created).
     */
    private static <T> Optional<T> optional(Instance<T> beans, String part, String consequence) {
        for (Instance.Handle<T> handle : beans.handles()) {
            try {
                return Optional.of(handle.get());
            } catch (RuntimeException | LinkageError notUsable) {
                LOG.info(() -> "Idemkey: " + part + " is not usable here (" + notUsable + "): " + consequence);
                return Optional.empty();
            }
        }
        LOG.info(() -> "Idemkey: " + part + " is not available on this server: " + consequence);
        return Optional.empty();
    }

    /** Created at start-up, not on the first request, so that the first request costs no more than others. */
    void eager(@Observes @Initialized(ApplicationScoped.class) Object applicationStarted) {
        // Observing the event is enough: the container creates this bean to deliver it.
    }

    /**
     * Stops the renewals (the application stops: its requests will not finish), lets the store calls
     * already handed to the work pool (completions after a commit, releases after a rollback) finish
     * for up to {@link #STOP_WAIT}, then closes the store.
     */
    @PreDestroy
    void stop() {
        if (scheduler != null) {
            scheduler.cancelAll();
        }
        if (leasePool != null) {
            leasePool.shutdownNow();
        }
        if (workPool != null) {
            workPool.shutdown(); // periodic tasks (the cleanup) end, store calls handed over still run
            try {
                if (!workPool.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    int dropped = workPool.shutdownNow().size();
                    LOG.warning(() -> "Idemkey stopped with background work unfinished after " + STOP_WAIT.toSeconds() + " s ("
                            + dropped + " tasks not started): a record whose completion was among them stays in progress"
                            + " until its lease runs out");
                }
            } catch (InterruptedException e) {
                workPool.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        if (jsonb != null) {
            try {
                jsonb.close();
            } catch (Exception e) {
                LOG.log(Level.FINE, "Closing JSON-B failed", e);
            }
        }
        if (store != null && settings.store() != IdempotencySettings.StoreKind.CUSTOM) { // the application's bean is CDI's to close
            try {
                store.close();
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "Closing the idempotency store failed", e);
            }
        }
    }

    /** The admin API's settings. */
    public AdminSettings adminSettings() {
        return adminSettings;
    }

    /** The operators' service, where the admin API is enabled. */
    public Optional<RecordAdmin> recordAdmin() {
        return Optional.ofNullable(recordAdmin);
    }

    public IdempotencySettings settings() {
        return settings;
    }

    public IdempotencyEngine engine() {
        return engine;
    }

    public Fingerprint fingerprint() {
        return fingerprint;
    }

    /** Where decisions are traced (the current span), or {@link RequestTracer#NONE}. */
    public RequestTracer tracer() {
        return tracer;
    }

    /** The JTA transactions of the server; {@link Transactions#NONE} where it has none. */
    Transactions transactions() {
        return transactions;
    }

    /** A server without JTA may not even have its API: the class that uses it must not be loaded then. */
    private static Transactions jta(PlatformResources resources, List<String> origins) {
        try {
            PlatformResources.Found<Transactions> found = JtaTransactions.lookup(resources);
            origins.add(found.origin());
            return found.resource();
        } catch (LinkageError noJtaApi) {
            LOG.info(() -> "Idemkey: no JTA API here (" + noJtaApi + "): a guarded method's transaction is not"
                    + " looked at (a response is never recorded together with the method's effects)");
            origins.add("no JTA API");
            return Transactions.NONE;
        }
    }

    /** Idempotent calls of {@code @Idempotent} methods and {@code Idempotency}, on this runtime's engine. */
    IdempotentCalls calls() {
        return calls;
    }

    /** Records a guarded method's outcome inside its JTA transaction. */
    CompletionWithEffects completionWithEffects() {
        return completionWithEffects;
    }

    /** A call's store work around the transaction it runs in. */
    TransactionalStoreCalls callStoreCalls() {
        return callStoreCalls;
    }

    /** An {@code @Idempotent} method, resolved once (at deployment, unless the extension never saw its class). */
    IdempotentMethod idempotentMethod(Method method) {
        IdempotentMethod resolved = idempotentMethods.get(method);
        if (resolved == null) {
            resolved = extension.idempotentMethod(method).orElseGet(() -> {
                IdempotentMethod.misplaced(method).ifPresent(problem -> {
                    throw new IllegalStateException("Invalid Idemkey placement: " + problem);
                });
                return IdempotentMethod.resolve(method, policies);
            });
            idempotentMethods.put(method, resolved);
        }
        return resolved;
    }

    public IdempotencyStore store() {
        return store;
    }

    /** Hands guarded requests from the JAX-RS filters to the CDI interceptor. */
    public CurrentRequest currentRequest() {
        return currentRequest;
    }

    /**
     * The JAX-RS runtime binds Idemkey's filters to this resource method: it is documented with the
     * others, and it fails (the deployment, where the runtime binds at deployment) if the CDI
     * interceptor cannot be bound to it.
     *
     * @throws IllegalStateException naming the method, if the interceptor cannot run on it
     */
    public void bound(Class<?> resourceClass, Method method, IdempotencyPolicy policy) {
        Optional<String> problem = extension.notInterceptable(resourceClass, method);
        if (problem.isPresent()) {
            LOG.severe(problem.get());
            throw new IllegalStateException(problem.get());
        }
        ResourceMethods.httpMethod(resourceClass, method).filter(settings.methods()::contains).ifPresent(httpMethod ->
                extension.served(new GuardedEndpoint(httpMethod, ResourceMethods.pathTemplate(resourceClass, method), policy)));
    }

    /** Whether leases are renewed on threads of the server's managed thread factory (else on private threads). */
    public boolean renewsOnManagedThreads() {
        return onManagedThreads;
    }

    /** The policy of a resource method, resolved once; empty if it is not annotated. */
    public Optional<IdempotencyPolicy> policy(Class<?> resourceClass, Method method) {
        ResourceMethod key = new ResourceMethod(resourceClass, method);
        IdempotencyPolicy policy = resolved.get(key);
        if (policy == null) {
            // resolved at deployment, unless the extension never saw the class (not a CDI bean)
            Optional<IdempotencyPolicy> fresh = extension.policy(resourceClass, method)
                    .or(() -> policies.resolve(resourceClass, method));
            fresh.ifPresent(p -> resolved.put(key, p));
            return fresh;
        }
        return Optional.of(policy);
    }

    /**
     * A Redis user that lacks a permission Idemkey needs (an ACL), or credentials Redis does not
     * accept, fail the deployment, naming what was refused; a Redis that does not answer now does
     * not (an outage at start-up is answered 503, as later), and the first call that is refused
     * says what is missing.
     */
    private static void checkPermissions(RedisIdempotencyStore redis, IdempotencySettings settings, boolean listed) {
        try {
            redis.checkPermissions(settings.keyPrefix(), settings.rateLimit().isPresent(), listed);
        } catch (StoreAccessDeniedException e) {
            throw new ConfigurationException(IdempotencySettings.REDIS_USER, "(or the user and password of "
                    + IdempotencySettings.REDIS_URL + " or " + IdempotencySettings.REDIS_PASSWORD + "): " + e.getMessage());
        } catch (StoreUnavailableException e) {
            LOG.warning("Idemkey could not check the permissions of its Redis user now (" + e.getMessage()
                    + "); a call Redis refuses will say what the user lacks");
        }
    }

    /**
     * The store the settings name; a Redis Cluster store refreshes its topology on {@code executor};
     * the JDBC store's DataSource is looked up with {@code resources} (where from: added to {@code origins}).
     */
    private IdempotencyStore openStore(IdempotencySettings settings, ScheduledExecutorService executor,
                                       PlatformResources resources, List<String> origins) {
        if (settings.store() == IdempotencySettings.StoreKind.CUSTOM) {
            // Looked up from the application's side: a library archive may not see the application's beans.
            Instance<IdempotencyStore> custom = CDI.current().select(IdempotencyStore.class);
            if (!custom.isResolvable()) {
                throw new ConfigurationException(IdempotencySettings.STORE, "is custom, but the application has "
                        + (custom.isAmbiguous() ? "more than one CDI bean" : "no CDI bean") + " implementing "
                        + IdempotencyStore.class.getName());
            }
            IdempotencyStore store = custom.get();
            LOG.info(() -> "Idemkey uses the application's store " + store);
            return store;
        }
        if (settings.store() == IdempotencySettings.StoreKind.MEMORY) {
            LOG.warning("Idemkey uses the in-memory store (idempotency.store=memory): keys are not shared with"
                    + " other instances and are lost on restart");
            return new InMemoryIdempotencyStore(Clock.systemUTC(), settings.memoryMaxRecords());
        }
        if (settings.store() == IdempotencySettings.StoreKind.JDBC) {
            PlatformResources.Found<DataSource> dataSource = resources.dataSource(settings.jdbc().dataSource());
            origins.add(dataSource.origin());
            return openJdbc(settings.jdbc(), dataSource);
        }
        return RedisIdempotencyStore.open(settings.redis(), executor);
    }

    /** The table in the application's DataSource, created if missing and allowed. */
    private static IdempotencyStore openJdbc(JdbcStoreOptions options, PlatformResources.Found<DataSource> dataSource) {
        JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource.resource(), options.table(), options.timeoutSeconds());
        if (options.createTable()) {
            try {
                store.createTable();
            } catch (UnsupportedDatabaseException e) {
                throw new ConfigurationException(IdempotencySettings.JDBC_DATASOURCE, "(the " + dataSource.origin()
                        + ") leads to a database the JDBC store does not support: " + e.getMessage());
            } catch (StoreUnavailableException e) {
                // as with Redis, a database that is away at start-up is an outage (503), not a broken deployment
                LOG.warning("Idemkey could not create the table " + options.table() + " now (it will once the database"
                        + " answers): " + e.getMessage());
            }
        } else {
            java.util.Optional<String> missing;
            try {
                missing = store.missingFromTable();
            } catch (UnsupportedDatabaseException e) {
                throw new ConfigurationException(IdempotencySettings.JDBC_DATASOURCE, "(the " + dataSource.origin()
                        + ") leads to a database the JDBC store does not support: " + e.getMessage());
            } catch (StoreUnavailableException e) {
                LOG.warning("Idemkey could not check the table " + options.table() + " now: " + e.getMessage());
                missing = java.util.Optional.empty();
            }
            if (missing.isPresent()) {
                throw new ConfigurationException(IdempotencySettings.JDBC_CREATE_TABLE, "is false, and " + missing.get());
            }
        }
        LOG.info(() -> "Idemkey keeps its records in the table " + options.table() + " of the " + dataSource.origin());
        return store;
    }

    /**
     * Idemkey's background threads (lease renewals, completions after a transaction, the JDBC
     * cleanup, a cluster's topology refreshes): the server's default managed thread factory's, a
     * {@code ManagedThreadFactory} bean or the one in JNDI, used as the {@code ThreadFactory} it is (no
     * link to the Concurrency API, which a server may lack); private threads where there is none. Not
     * its managed scheduled executor: that one captures the caller's context for every task it is
     * given (on Payara Micro a class-path lookup each time: 6 % of a first execution's server CPU in
     * the benchmark's profile), and a suspended WildFly refuses to run its tasks, so the leases of
     * the requests it was still draining ran out.
     */
    private ThreadFactory backgroundThreads(PlatformResources resources, List<String> origins) {
        PlatformResources.Found<ThreadFactory> managed = resources.optional(MANAGED_THREAD_FACTORY, ThreadFactory.class,
                MANAGED_THREADS);
        if (managed.resource() != null) {
            onManagedThreads = true;
            origins.add(managed.origin());
            return managed.resource();
        }
        LOG.log(Level.WARNING, "No managed thread factory (" + managed.origin() + "; on Open Liberty, enable the"
                + " concurrent-3.0 feature); leases are renewed on private threads");
        origins.add("private threads");
        return task -> {
            Thread thread = new Thread(task, "idemkey-background");
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * A pool of {@code size} threads, all started now, from the deploying thread (a managed thread
     * then carries the application's context, whichever thread hands it work later).
     */
    private static ScheduledThreadPoolExecutor pool(int size, ThreadFactory threads) {
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(size, threads);
        pool.setRemoveOnCancelPolicy(true); // cancelled tasks (an idle ticker, retries) leave the queue at once
        try {
            pool.prestartAllCoreThreads();
        } catch (RuntimeException | Error e) {
            pool.shutdownNow();
            throw e;
        }
        return pool;
    }
}
