package io.idemkey.cdi;

import io.idemkey.config.ConfigurationException;
import io.idemkey.config.IdempotencySettings;
import io.idemkey.config.IdempotencySettings.Resources;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.literal.NamedLiteral;
import jakarta.enterprise.inject.spi.CDI;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * The platform's resources Idemkey uses (the JDBC store's DataSource, the JTA
 * {@code TransactionSynchronizationRegistry}, the managed thread factory), looked up where
 * {@value IdempotencySettings#RESOURCES} says: a CDI bean the application or its runtime offers (as
 * Quarkus and Helidon do), a JNDI name (as a full Jakarta EE server binds them), or a bean where one
 * resolves and else the JNDI name. Beans are looked up from the application's side
 * ({@code CDI.current()}): a library archive may not see the application's beans.
 */
final class PlatformResources {

    /**
     * What a look-up found, and where it came from ({@code "... from CDI"}, {@code "... from JNDI"},
     * for the start-up line); for an optional resource that was not found, {@code resource} is null and
     * {@code origin} says what was looked for.
     */
    record Found<T>(T resource, String origin) {
    }

    /**
     * A bean look-up's outcome: the instance, or why there is none; {@code unsatisfied} where the
     * application has no such bean at all (rather than several, or one that cannot be created).
     */
    private record Bean<T>(T instance, String problem, boolean unsatisfied) {
    }

    private static final Logger LOG = Logger.getLogger(PlatformResources.class.getName());

    private final Resources mode;

    PlatformResources(Resources mode) {
        this.mode = mode;
    }

    /**
     * The JDBC store's DataSource: the bean {@code @Named(name)} ({@code @Default} where {@code name}
     * is null, which the settings allow with {@code resources=cdi} only), or what the JNDI name
     * {@code name} leads to.
     *
     * @throws ConfigurationException naming {@value IdempotencySettings#JDBC_DATASOURCE} where there is none
     */
    Found<DataSource> dataSource(String name) {
        String wanted = DataSource.class.getName() + (name == null ? " @Default" : " @Named(\"" + name + "\")");
        Bean<DataSource> bean = null;
        if (mode != Resources.JNDI) {
            bean = name == null ? bean(DataSource.class, wanted) : bean(DataSource.class, wanted, NamedLiteral.of(name));
            if (bean.instance() != null) {
                return new Found<>(bean.instance(), "DataSource " + wanted.substring(wanted.indexOf(' ') + 1) + " from CDI");
            }
            if (mode == Resources.AUTO) {
                unusable(bean.unsatisfied(), bean.problem(), "DataSource " + name);
            }
            if (mode == Resources.CDI) {
                throw new ConfigurationException(IdempotencySettings.JDBC_DATASOURCE, (name == null ? "is not set"
                        : "is '" + name + "'") + ", and " + bean.problem() + " (" + IdempotencySettings.RESOURCES
                        + "=cdi: CDI beans only, no JNDI look-up)");
            }
        }
        try {
            return new Found<>((DataSource) new InitialContext().lookup(name), "DataSource " + name + " from JNDI");
        } catch (NamingException | ClassCastException e) {
            throw new ConfigurationException(IdempotencySettings.JDBC_DATASOURCE, "names no DataSource the application"
                    + " can look up: '" + name + "' (" + e.getMessage() + ")" + (bean == null ? "" : "; " + bean.problem()));
        }
    }

    /**
     * An optional resource: the {@code @Default} bean of the type named {@code typeName} (which this
     * server may not have: it is loaded by name), else what {@code jndiName} leads to, each where the
     * mode allows it; {@link Found#resource()} is null where neither is there.
     */
    <T> Found<T> optional(String typeName, Class<T> as, String jndiName) {
        String shortName = typeName.substring(typeName.lastIndexOf('.') + 1);
        List<String> missing = new ArrayList<>();
        if (mode != Resources.JNDI) {
            Optional<Class<?>> type = type(typeName);
            if (type.isEmpty()) {
                missing.add("no " + typeName + " API here, hence no such CDI bean");
            } else {
                Bean<?> bean = bean(type.get(), typeName + " @Default");
                if (as.isInstance(bean.instance())) {
                    return new Found<>(as.cast(bean.instance()), shortName + " from CDI");
                }
                String problem = bean.instance() == null ? bean.problem() : "the CDI bean " + typeName + " is no " + as.getName();
                if (mode == Resources.AUTO) {
                    unusable(bean.unsatisfied(), problem, shortName + " at " + jndiName);
                }
                missing.add(problem);
            }
        }
        if (mode != Resources.CDI) {
            try {
                return new Found<>(as.cast(new InitialContext().lookup(jndiName)), shortName + " from JNDI (" + jndiName + ")");
            } catch (NamingException | ClassCastException | LinkageError e) {
                missing.add("none at " + jndiName + " (" + e + ")");
            }
        } else {
            missing.add(IdempotencySettings.RESOURCES + "=cdi: no JNDI look-up");
        }
        return new Found<>(null, String.join("; ", missing));
    }

    /** The same, for a type Idemkey can link to (a server without it never gets here). */
    <T> Found<T> optional(Class<T> type, String jndiName) {
        return optional(type.getName(), type, jndiName);
    }

    /**
     * The one bean of {@code type} with {@code qualifiers} the application sees; {@code wanted}
     * describes it in the problem where there is none, several, or it cannot be created.
     */
    private static <T> Bean<T> bean(Class<T> type, String wanted, Annotation... qualifiers) {
        try {
            Instance<T> beans = CDI.current().select(type, qualifiers);
            if (beans.isUnsatisfied()) {
                return new Bean<>(null, "the application has no CDI bean " + wanted, true);
            }
            if (beans.isAmbiguous()) {
                return new Bean<>(null, "the application has more than one CDI bean " + wanted, false);
            }
            T instance = beans.get();
            return instance == null ? new Bean<>(null, "the CDI bean " + wanted + " is null", false)
                    : new Bean<>(instance, null, false);
        } catch (RuntimeException | LinkageError e) {
            return new Bean<>(null, "the CDI bean " + wanted + " could not be had (" + e + ")", false);
        }
    }

    /**
     * Under {@code auto}, a bean the application offers but Idemkey cannot use (several, or one that
     * cannot be created) is passed over for the JNDI name: say so, as the application meant that
     * bean for it.
     */
    private static void unusable(boolean unsatisfied, String problem, String instead) {
        if (!unsatisfied) {
            LOG.warning(() -> "Idemkey: " + problem + "; it looks up the " + instead + " in JNDI instead ("
                    + IdempotencySettings.RESOURCES + "=auto)");
        }
    }

    /** The type as the application sees it, else as Idemkey does; empty where this server lacks its API. */
    private static Optional<Class<?>> type(String name) {
        ClassLoader application = Thread.currentThread().getContextClassLoader();
        for (ClassLoader loader : new ClassLoader[]{application, PlatformResources.class.getClassLoader()}) {
            if (loader == null) {
                continue;
            }
            try {
                return Optional.of(Class.forName(name, false, loader));
            } catch (ClassNotFoundException | LinkageError absent) {
                // the next loader, or none
            }
        }
        return Optional.empty();
    }
}
