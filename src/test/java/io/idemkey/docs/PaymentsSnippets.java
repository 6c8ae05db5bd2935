package io.idemkey.docs;

import io.idemkey.IdempotencyContext;
import io.idemkey.IdempotencyKey;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.PrePersist;
import jakarta.persistence.Version;
import jakarta.transaction.Transactional;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.ServiceUnavailableException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Principal;
import java.time.Instant;
import java.util.HexFormat;

/** docs/payments.md: a payments service on the JDBC store. */
class PaymentsSnippets {

    /** The provider's client, as a payment provider's SDK offers it. */
    interface PaymentProvider {
        /** Charges once per idempotency key: the same key again answers the first charge. */
        ProviderCharge charge(String idempotencyKey, long amountCents, String currency, String cardToken)
                throws ProviderTimeoutException;
    }

    record ProviderCharge(String id, boolean declined, String declineReason) {}

    static class ProviderTimeoutException extends Exception {}

    record Declined(String reason) {}

    // tag::entity[]
    @Entity
    public class Payment {
        @Id @GeneratedValue(strategy = GenerationType.IDENTITY)
        private Long id;                                        // in the recorded response: rendered after the flush
        @Version
        private int version;
        @Column(nullable = false, unique = true)
        private String providerChargeId;
        private String orderId;
        private long amountCents;
        private String currency;
        private Instant createdAt;

        protected Payment() {
        }

        public Payment(String orderId, long amountCents, String currency, String providerChargeId) {
            this.orderId = orderId;
            this.amountCents = amountCents;
            this.currency = currency;
            this.providerChargeId = providerChargeId;
        }

        @PrePersist
        void created() {
            createdAt = Instant.now();
        }

        public Long getId() {
            return id;
        }
        // the other getters
    }
    // end::entity[]

    // tag::resource[]
    public record ChargeRequest(@NotBlank String orderId, @Positive long amountCents,
                                @NotBlank String currency, @NotBlank String cardToken) {}

    @Path("/payments") @RequestScoped
    public class PaymentResource {
        @PersistenceContext EntityManager entities;              // jdbc/payments, as idempotency.jdbc.datasource
        @Inject PaymentProvider provider;
        @Inject IdempotencyContext idempotency;

        @POST
        @IdempotencyKey(ttlHours = 48, lockTtlSeconds = 60)
        @Transactional                                          // the record commits with the Payment row
        @Produces(MediaType.APPLICATION_JSON)
        public Response charge(@Valid ChargeRequest request, @Context SecurityContext caller, @Context UriInfo uri) {
            String providerKey = ProviderKeys.of(caller, idempotency.key().orElseThrow(), "charge");
            ProviderCharge charge;
            try {
                charge = provider.charge(providerKey, request.amountCents(), request.currency(), request.cardToken());
            } catch (ProviderTimeoutException unknown) {         // charged or not: the retry asks again, same key
                throw new ServiceUnavailableException(2L);      // 5xx: rolled back, key released, retried
            }
            if (charge.declined()) {                            // 4xx: recorded, every retry gets it again
                return Response.status(402).entity(new Declined(charge.declineReason())).build();
            }
            Payment payment = new Payment(request.orderId(), request.amountCents(), request.currency(), charge.id());
            entities.persist(payment);
            entities.flush();                                   // the IDENTITY id, for Location
            return Response.created(uri.getAbsolutePathBuilder().path(String.valueOf(payment.getId())).build())
                    .entity(payment).build();
        }
    }
    // end::resource[]

    // tag::provider-key[]
    /**
     * The provider's idempotency key for one call of one operation: the same on every retry of it,
     * different for every caller (Idemkey keeps two callers' equal keys apart; the provider would not).
     */
    public final class ProviderKeys {
        public static String of(SecurityContext caller, String idempotencyKey, String call) {
            Principal principal = caller.getUserPrincipal();     // idempotency.scope=principal
            String scope = principal == null ? "" : principal.getName();
            try {
                byte[] digest = MessageDigest.getInstance("SHA-256")
                        .digest((scope + "\n" + idempotencyKey + "\n" + call).getBytes(StandardCharsets.UTF_8));
                return HexFormat.of().formatHex(digest);         // 64 characters
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }
    // end::provider-key[]
}
