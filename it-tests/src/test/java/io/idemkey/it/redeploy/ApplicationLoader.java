package io.idemkey.it.redeploy;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;

import java.lang.ref.WeakReference;

/**
 * Leaves a weak reference to this application's class loader where another application on the
 * same server finds it (a system property holds any object), so that, once this application is
 * undeployed, that one can tell what still holds anything of it.
 */
@Path("/loader")
public class ApplicationLoader {

    @POST
    public String remember(@QueryParam("property") String property) {
        System.getProperties().put(property, new WeakReference<>(ApplicationLoader.class.getClassLoader()));
        return ApplicationLoader.class.getClassLoader().toString();
    }
}
