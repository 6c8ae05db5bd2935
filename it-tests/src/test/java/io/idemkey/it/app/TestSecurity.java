package io.idemkey.it.app;

import jakarta.annotation.security.DeclareRoles;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.authentication.mechanism.http.BasicAuthenticationMechanismDefinition;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStore;

import java.util.Map;
import java.util.Set;

/**
 * HTTP Basic authentication with two users, alice and bob (password "pw"), so that the tests can
 * prove per-caller scoping, and ops (password "pw", also in the role idempotency-ops) for the admin
 * API. Requests without credentials stay anonymous.
 */
@ApplicationScoped
@DeclareRoles({"user", "idempotency-ops"})
@BasicAuthenticationMechanismDefinition(realmName = "idemkey-tests")
public class TestSecurity implements IdentityStore {

    private static final Map<String, String> USERS = Map.of("alice", "pw", "bob", "pw", "ops", "pw");

    public CredentialValidationResult validate(UsernamePasswordCredential credential) {
        String password = USERS.get(credential.getCaller());
        if (password != null && credential.compareTo(credential.getCaller(), password)) {
            return new CredentialValidationResult(credential.getCaller(),
                    credential.getCaller().equals("ops") ? Set.of("user", "idempotency-ops") : Set.of("user"));
        }
        return CredentialValidationResult.INVALID_RESULT;
    }
}
