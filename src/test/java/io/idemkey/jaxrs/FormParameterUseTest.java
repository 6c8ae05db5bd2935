package io.idemkey.jaxrs;

import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Form;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.UriInfo;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FormParameterUseTest {

    @Test
    void formParamOnTheMethodOrInABeanAtAnyDepthReadsFormParameters() {
        assertTrue(reads(Resource.class, "params"));
        assertTrue(reads(Resource.class, "bean"));
        assertTrue(reads(Resource.class, "nested"));
        assertTrue(reads(Resource.class, "setter"));
        assertTrue(reads(Resource.class, "inherited"));
        assertTrue(reads(Resource.class, "constructor"));
    }

    @Test
    void formReadAsAnEntityOrOtherParametersReadNoFormParameters() {
        assertFalse(reads(Resource.class, "map"));
        assertFalse(reads(Resource.class, "form"));
        assertFalse(reads(Resource.class, "headers"));
        assertFalse(reads(Resource.class, "cyclic"), "a bean that holds itself is looked at once");
    }

    @Test
    void formParamOnAResourceFieldReadsFormParametersForEveryMethod() {
        assertTrue(reads(FieldResource.class, "map"));
    }

    @Test
    void formParamOnTheInterfaceMethodCountsForTheImplementation() {
        assertTrue(reads(Implementation.class, "create"));
    }

    private static boolean reads(Class<?> type, String name) {
        Method method = Arrays.stream(type.getMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
        return FormParameterUse.readsFormParameters(type, method);
    }

    public static class Charge {
        @FormParam("amount")
        String amount;
    }

    public static class Outer {
        @HeaderParam("X-Trace")
        String trace;
        @BeanParam
        Charge charge;
    }

    public static class BySetter {
        String amount;

        @FormParam("amount")
        public void setAmount(String amount) {
            this.amount = amount;
        }
    }

    public static class Base {
        @FormParam("currency")
        String currency;
    }

    public static class Derived extends Base {
    }

    public static class ByConstructor {
        final String amount;

        public ByConstructor(@FormParam("amount") String amount) {
            this.amount = amount;
        }
    }

    public static class Headers {
        @HeaderParam("X-Trace")
        String trace;
        @QueryParam("q")
        String query;
    }

    public static class Cyclic {
        @BeanParam
        Cyclic self;
        @HeaderParam("X-Trace")
        String trace;
    }

    @Path("/r")
    @Consumes("application/x-www-form-urlencoded")
    public static class Resource {
        @POST
        public void params(@FormParam("amount") String amount, @Context UriInfo uri) {
        }

        @POST
        public void bean(@BeanParam Charge charge) {
        }

        @POST
        public void nested(@BeanParam Outer outer) {
        }

        @POST
        public void setter(@BeanParam BySetter bean) {
        }

        @POST
        public void inherited(@BeanParam Derived bean) {
        }

        @POST
        public void constructor(@BeanParam ByConstructor bean) {
        }

        @POST
        public void map(MultivaluedMap<String, String> form) {
        }

        @POST
        public void form(Form form, @HeaderParam("X-Trace") String trace) {
        }

        @POST
        public void headers(@BeanParam Headers headers, Form form) {
        }

        @POST
        public void cyclic(@BeanParam Cyclic bean, Form form) {
        }
    }

    @Path("/f")
    public static class FieldResource {
        @FormParam("amount")
        String amount;

        @POST
        public void map(MultivaluedMap<String, String> form) {
        }
    }

    public interface Contract {
        @POST
        @Consumes("application/x-www-form-urlencoded")
        void create(@FormParam("amount") String amount);
    }

    @Path("/i")
    public static class Implementation implements Contract {
        @Override
        public void create(String amount) {
        }
    }
}
