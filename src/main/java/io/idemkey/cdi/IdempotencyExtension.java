package io.idemkey.cdi;

import io.idemkey.IdempotencyKey;
import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.config.PolicyResolver;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.WithAnnotations;
import jakarta.ws.rs.HttpMethod;
import org.eclipse.microprofile.config.ConfigProvider;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Validates Idemkey's configuration while the application is deployed: the global settings, and the
 * policy of every guarded method with its configuration overrides. An invalid value fails the
 * deployment with a message naming the property, instead of failing requests later.
 */
public class IdempotencyExtension implements Extension {

    private final Set<Class<?>> guardedTypes = ConcurrentHashMap.newKeySet();
    private volatile IdempotencySettings settings;

    void collect(@Observes @WithAnnotations(IdempotencyKey.class) ProcessAnnotatedType<?> type) {
        guardedTypes.add(type.getAnnotatedType().getJavaClass());
    }

    void validate(@Observes AfterDeploymentValidation validation) {
        ConfigLookup config = IdempotencyRuntime.lookup(ConfigProvider.getConfig());
        try {
            settings = IdempotencySettings.from(config);
        } catch (ConfigurationException e) {
            validation.addDeploymentProblem(e);
            return;
        }

        PolicyResolver policies = new PolicyResolver(config, settings);
        for (Class<?> type : guardedTypes) {
            for (Method method : type.getMethods()) {
                if (isResourceMethod(method) || method.isAnnotationPresent(IdempotencyKey.class)) {
                    try {
                        policies.resolve(type, method);
                    } catch (ConfigurationException e) {
                        validation.addDeploymentProblem(e);
                    }
                }
            }
        }
        guardedTypes.clear();
    }

    /** The settings validated at deployment, for the runtime (they are read once). */
    Optional<IdempotencySettings> settings() {
        return Optional.ofNullable(settings);
    }

    private static boolean isResourceMethod(Method method) {
        for (Annotation annotation : method.getAnnotations()) {
            if (annotation.annotationType().isAnnotationPresent(HttpMethod.class)) {
                return true;
            }
        }
        return false;
    }
}
