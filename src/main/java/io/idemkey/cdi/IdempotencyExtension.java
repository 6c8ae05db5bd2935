package io.idemkey.cdi;

import io.idemkey.Idempotent;
import io.idemkey.IdempotencyKey;
import io.idemkey.client.RetryPolicy;
import io.idemkey.config.ConfigLookup;
import io.idemkey.config.AdminSettings;
import io.idemkey.config.ConfigurationException;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.config.PolicyResolver;
import io.idemkey.core.GuardedEndpoint;
import io.idemkey.core.IdempotencyPolicy;
import io.idemkey.resource.ResourceMethods;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.AnnotatedMethod;
import jakarta.enterprise.inject.spi.BeforeShutdown;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.InjectionPoint;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.ProcessInjectionPoint;
import jakarta.enterprise.inject.spi.WithAnnotations;
import jakarta.interceptor.Interceptor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * Idemkey at deployment:
 * <ul>
 * <li>binds the CDI interceptor to resource methods whose {@code @IdempotencyKey} sits on an
 *     implemented interface (its method, or the interface itself): CDI does not inherit interceptor
 *     bindings from interfaces, JAX-RS does inherit their annotations, and the two must agree;</li>
 * <li>validates the global settings and the policy of every guarded method with its configuration
 *     overrides: an invalid value fails the deployment with a message naming the property;</li>
 * <li>fails the deployment for an {@code @IdempotencyKey} that cannot be honoured (on a method
 *     JAX-RS does not serve as a resource method), naming the method: never silently unguarded;</li>
 * <li>does the same for {@code @Idempotent} methods of CDI beans: a placement that would run
 *     unguarded (no key parameter, a method CDI cannot intercept, ...) or an invalid override fails
 *     the deployment, naming the method or the property;</li>
 * <li>validates the client's retry policies (global, and per method of each injected Rest Client
 *     whose interface carries {@code @IdempotencyKey}), naming the property;</li>
 * <li>keeps the resolved policies, read once, for the runtime and the API documentation.</li>
 * </ul>
 */
public class IdempotencyExtension implements Extension {

    private static final Logger LOG = Logger.getLogger(IdempotencyExtension.class.getName());

    private final Set<Class<?>> guardedTypes = ConcurrentHashMap.newKeySet();
    /** Classes whose interface placements got the interceptor binding here. */
    private final Set<Class<?>> boundFromInterfaces = ConcurrentHashMap.newKeySet();
    /** Endpoints the JAX-RS runtime reported, for the ones whose classes CDI never showed this extension. */
    private final Set<GuardedEndpoint> served = ConcurrentHashMap.newKeySet();
    private volatile IdempotencySettings settings;
    private volatile AdminSettings admin;
    private final Map<ResourceMethod, IdempotencyPolicy> policies = new ConcurrentHashMap<>();
    private volatile List<GuardedEndpoint> endpoints = List.of();
    /** Classes with {@code @Idempotent} methods or {@code @Idempotent.Key} parameters. */
    private final Set<Class<?>> callTypes = ConcurrentHashMap.newKeySet();
    private final Map<Method, IdempotentMethod> idempotentMethods = new ConcurrentHashMap<>();
    /** Rest Client interfaces the application injects. */
    private final Set<Class<?>> restClients = ConcurrentHashMap.newKeySet();
    private static final String REST_CLIENT_QUALIFIER = "org.eclipse.microprofile.rest.client.inject.RestClient";

    /**
     * The extension of the application this copy of the library belongs to (the jar sits in the
     * application's WEB-INF/lib, so each application has its own), for the one caller that cannot
     * reach CDI: Payara Micro builds the OpenAPI document on an HTTP thread outside the
     * application's CDI context. Everything else goes through CDI.
     */
    private static volatile IdempotencyExtension deployed;

    /** A method as a resource class serves it (an inherited method is shared by several classes). */
    record ResourceMethod(Class<?> resourceClass, Method method) {
    }

    void collect(@Observes @WithAnnotations(IdempotencyKey.class) ProcessAnnotatedType<?> type) {
        guardedTypes.add(type.getAnnotatedType().getJavaClass());
    }

    /**
     * Rest Client interfaces injected with {@code @RestClient}: the retry policies of their guarded
     * methods are validated at deployment. (The qualifier is matched by name: MicroProfile Rest
     * Client is optional.)
     */
    void collectRestClients(@Observes ProcessInjectionPoint<?, ?> event) {
        InjectionPoint point = event.getInjectionPoint();
        if (point.getType() instanceof Class<?> type && type.isInterface() && point.getQualifiers().stream()
                .anyMatch(q -> q.annotationType().getName().equals(REST_CLIENT_QUALIFIER))) {
            restClients.add(type);
        }
    }

    void collectCalls(@Observes @WithAnnotations({Idempotent.class, Idempotent.Key.class}) ProcessAnnotatedType<?> type) {
        callTypes.add(type.getAnnotatedType().getJavaClass());
    }

    /**
     * Interface placements: the implementing methods get the interceptor binding CDI would not
     * inherit. Every type is looked at (a resource may take even its {@code @Path} from the
     * interface, as RESTEasy allows); those without interfaces are passed over at once.
     */
    <T> void bindInterfacePlacements(@Observes ProcessAnnotatedType<T> event) {
        Class<T> type = event.getAnnotatedType().getJavaClass();
        if (type.isInterface() || type.isAnnotation() || !implementsAnyInterface(type)
                || type.isAnnotationPresent(IdempotencyKey.class)) {
            return; // nothing to inherit from, or the class-level binding covers every method already
        }
        Map<Method, IdempotencyKey> inherited = new HashMap<>();
        for (AnnotatedMethod<? super T> annotated : event.getAnnotatedType().getMethods()) {
            Method method = annotated.getJavaMember();
            if (method.getDeclaringClass().isInterface() || annotated.isAnnotationPresent(IdempotencyKey.class)) {
                continue;
            }
            PolicyResolver.annotation(type, method).ifPresent(annotation -> inherited.put(method, annotation));
        }
        if (!inherited.isEmpty()) {
            guardedTypes.add(type);
            boundFromInterfaces.add(type);
            event.configureAnnotatedType()
                    .filterMethods(m -> inherited.containsKey(m.getJavaMember()))
                    .forEach(m -> m.add(inherited.get(m.getAnnotated().getJavaMember())));
        }
    }

    private static boolean implementsAnyInterface(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            if (c.getInterfaces().length > 0) {
                return true;
            }
        }
        return false;
    }

    void validate(@Observes AfterDeploymentValidation validation) {
        ConfigLookup config = ConfigLookup.microProfile();
        try {
            settings = IdempotencySettings.from(config);
            admin = AdminSettings.from(config);
        } catch (ConfigurationException e) {
            validation.addDeploymentProblem(e);
            return;
        }

        PolicyResolver resolver = new PolicyResolver(config, settings);
        List<GuardedEndpoint> found = new ArrayList<>();
        for (Class<?> type : guardedTypes) {
            if (type.isInterface()) {
                continue; // judged through the classes that implement it
            }
            for (Method method : methods(type)) {
                Optional<String> problem = misplaced(type, method);
                if (problem.isPresent()) {
                    validation.addDeploymentProblem(new DeploymentException("Invalid Idemkey placement: " + problem.get()));
                    continue;
                }
                Optional<String> httpMethod = ResourceMethods.httpMethod(type, method);
                if (httpMethod.isEmpty() || !ResourceMethods.invocable(method)) {
                    continue;
                }
                try {
                    Optional<IdempotencyPolicy> policy = resolver.resolve(type, method);
                    if (policy.isEmpty()) {
                        continue;
                    }
                    policies.put(new ResourceMethod(type, method), policy.get());
                    if (settings.methods().contains(httpMethod.get())) {
                        found.add(new GuardedEndpoint(httpMethod.get(), ResourceMethods.pathTemplate(type, method), policy.get()));
                    } else if (PolicyResolver.methodAnnotation(type, method).isPresent()) {
                        LOG.warning(() -> "Idemkey: " + type.getName() + "." + method.getName() + " carries @IdempotencyKey but"
                                + " answers " + httpMethod.get() + ", which is not in " + IdempotencySettings.METHODS + " "
                                + settings.methods() + ": its requests pass unguarded");
                    }
                } catch (ConfigurationException e) {
                    validation.addDeploymentProblem(e);
                }
            }
        }
        validateCalls(validation, resolver);
        validateClients(validation, config);
        found.sort(Comparator.comparing(GuardedEndpoint::pathTemplate).thenComparing(GuardedEndpoint::httpMethod));
        endpoints = List.copyOf(found);
        guardedTypes.clear();
        deployed = this;
    }

    /** Every {@code @Idempotent} method: placed where it can be honoured, its policy valid with its overrides. */
    private void validateCalls(AfterDeploymentValidation validation, PolicyResolver resolver) {
        for (Class<?> type : callTypes) {
            if (type.isAnnotationPresent(Idempotent.class) && !type.isAnnotationPresent(Interceptor.class)) {
                validation.addDeploymentProblem(new DeploymentException("Invalid Idemkey placement: @Idempotent on the class "
                        + type.getName() + ": each method needs its own key parameter. Put @Idempotent on the methods."));
                continue;
            }
            for (Method method : type.getDeclaredMethods()) {
                Optional<String> problem = IdempotentMethod.misplaced(method);
                if (problem.isPresent()) {
                    validation.addDeploymentProblem(new DeploymentException("Invalid Idemkey placement: " + problem.get()));
                } else if (method.isAnnotationPresent(Idempotent.class)) {
                    try {
                        idempotentMethods.put(method, IdempotentMethod.resolve(method, resolver));
                    } catch (ConfigurationException e) {
                        validation.addDeploymentProblem(e);
                    }
                }
            }
        }
        warnOfUnpinnedScopes(idempotentMethods);
        if (!idempotentMethods.isEmpty()) {
            LOG.info(() -> "Idemkey guards " + idempotentMethods.size() + " @Idempotent method(s): " + idempotentMethods.entrySet()
                    .stream().map(e -> e.getKey().getDeclaringClass().getSimpleName() + "." + e.getKey().getName()
                            + " (scope " + e.getValue().policy().scope() + ")").sorted().toList());
        }
        callTypes.clear();
    }

    /**
     * A WARNING for each {@code @Idempotent} method without a {@code scope}: its records are kept
     * under its class's and its own name, so renaming either, or moving the class to another
     * package, leaves every record of it behind (calls with keys it already answered run again).
     */
    static void warnOfUnpinnedScopes(Map<Method, IdempotentMethod> methods) {
        methods.entrySet().stream()
                .filter(e -> e.getKey().getAnnotation(Idempotent.class).scope().isBlank())
                .map(e -> "Idemkey: @Idempotent on " + e.getKey().getDeclaringClass().getName() + "." + e.getKey().getName()
                        + "() has no scope, so its records are kept under the scope " + e.getValue().policy().scope()
                        + ", the class's and the method's names: renaming either or moving the class leaves every"
                        + " record behind, and calls with keys already answered run again. Pin the scope:"
                        + " @Idempotent(scope = \"" + e.getValue().policy().scope() + "\") keeps these records.")
                .sorted()
                .forEach(LOG::warning);
    }

    /** The client's retry policies: the global one, and each guarded method's of the injected Rest Clients. */
    private void validateClients(AfterDeploymentValidation validation, ConfigLookup config) {
        try {
            RetryPolicy.from(config);
        } catch (ConfigurationException e) {
            validation.addDeploymentProblem(e);
        }
        for (Class<?> api : restClients) {
            for (Method method : api.getMethods()) {
                if (method.isAnnotationPresent(IdempotencyKey.class) || api.isAnnotationPresent(IdempotencyKey.class)) {
                    try {
                        // under the name the retries read it by: the interface that declares the method
                        RetryPolicy.from(config, method.getDeclaringClass(), method);
                    } catch (ConfigurationException e) {
                        validation.addDeploymentProblem(e);
                    }
                }
            }
        }
        restClients.clear();
    }

    /** The {@code @Idempotent} method as resolved at deployment, if the extension saw its class. */
    Optional<IdempotentMethod> idempotentMethod(Method method) {
        return Optional.ofNullable(idempotentMethods.get(method));
    }

    void forget(@Observes BeforeShutdown shutdown) {
        if (deployed == this) {
            deployed = null;
        }
    }

    /**
     * This application's extension: through CDI where the caller's thread can reach it, else the one
     * this copy of the library deployed with.
     */
    public static Optional<IdempotencyExtension> current() {
        try {
            return Optional.of(CDI.current().getBeanManager().getExtension(IdempotencyExtension.class));
        } catch (RuntimeException outsideTheApplicationsContext) {
            return Optional.ofNullable(deployed);
        }
    }

    /**
     * Why an annotation on this method cannot be honoured, if it cannot: JAX-RS never serves it as a
     * resource method, so no request to it would ever be guarded. The one statement of these rules,
     * for the deployment check here and for {@code MisplacedLocatorFilter}.
     */
    public static Optional<String> misplaced(Class<?> type, Method method) {
        if (PolicyResolver.methodAnnotation(type, method).isEmpty() || method.isSynthetic() || method.isBridge()) {
            return Optional.empty();
        }
        String name = type.getName() + "." + method.getName() + "()";
        if (!ResourceMethods.invocable(method)) {
            return Optional.of("@IdempotencyKey on " + name + ", which is not a public instance method: JAX-RS never"
                    + " invokes it, so it would never be guarded. Put the annotation on the public resource method.");
        }
        if (ResourceMethods.httpMethod(type, method).isEmpty()) {
            boolean locator = ResourceMethods.jaxrsDeclaration(type, method).isPresent();
            return Optional.of("@IdempotencyKey on " + name + ", which is "
                    + (locator ? "a sub-resource locator: the methods of the resource it returns are not guarded by it."
                            + " Put the annotation on the sub-resource's methods (or its class)."
                            : "not a JAX-RS resource method (no @POST, @PATCH, ...): Idemkey guards resource methods only."));
        }
        return Optional.empty();
    }

    /** Public methods (inherited ones included) and the class's own others, where a misplaced annotation may sit. */
    private static Set<Method> methods(Class<?> type) {
        Set<Method> methods = new LinkedHashSet<>(List.of(type.getMethods()));
        methods.addAll(List.of(type.getDeclaredMethods()));
        methods.removeIf(m -> m.getDeclaringClass() == Object.class);
        return methods;
    }

    /** The admin API's settings validated at deployment (empty before). */
    public Optional<AdminSettings> admin() {
        return Optional.ofNullable(admin);
    }

    /** The settings validated at deployment, for the runtime (they are read once). */
    public Optional<IdempotencySettings> settings() {
        return Optional.ofNullable(settings);
    }

    /** The policy resolved at deployment for this resource method, if the extension saw its class. */
    Optional<IdempotencyPolicy> policy(Class<?> resourceClass, Method method) {
        return Optional.ofNullable(policies.get(new ResourceMethod(resourceClass, method)));
    }

    /**
     * Every guarded endpoint of the application, sorted by path: those validated at deployment, and
     * those the JAX-RS runtime reported since (resource classes that are no CDI beans are not shown
     * to extensions on every server).
     */
    public List<GuardedEndpoint> endpoints() {
        if (served.isEmpty()) {
            return endpoints;
        }
        Map<String, GuardedEndpoint> all = new TreeMap<>();
        for (GuardedEndpoint endpoint : endpoints) {
            all.put(endpoint.pathTemplate() + " " + endpoint.httpMethod(), endpoint);
        }
        for (GuardedEndpoint endpoint : served) {
            all.putIfAbsent(endpoint.pathTemplate() + " " + endpoint.httpMethod(), endpoint);
        }
        return List.copyOf(all.values());
    }

    /** The JAX-RS runtime bound Idemkey to this endpoint. */
    void served(GuardedEndpoint endpoint) {
        served.add(endpoint);
    }

    /**
     * Why the CDI interceptor will not run on this guarded resource method, if it will not: its
     * {@code @IdempotencyKey} sits on an interface only (CDI does not inherit bindings from
     * interfaces), and the class never reached this extension to get the binding, as happens to a
     * resource class that is no CDI bean on Payara Micro.
     */
    Optional<String> notInterceptable(Class<?> type, Method method) {
        boolean onTheClass = type.isAnnotationPresent(IdempotencyKey.class) || ResourceMethods.declarations(type, method)
                .stream().anyMatch(m -> !m.getDeclaringClass().isInterface() && m.isAnnotationPresent(IdempotencyKey.class));
        if (onTheClass || boundFromInterfaces.contains(type)) {
            return Optional.empty();
        }
        return Optional.of("Invalid Idemkey placement: @IdempotencyKey on an interface guards " + type.getName() + "."
                + method.getName() + "(), but CDI does not manage " + type.getSimpleName() + " here, so its interceptor"
                + " cannot be bound (CDI does not inherit interceptor bindings from interfaces). Give "
                + type.getSimpleName() + " a CDI scope (@RequestScoped or @ApplicationScoped), or put"
                + " @IdempotencyKey on the class or the method.");
    }
}
