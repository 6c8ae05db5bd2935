package io.idemkey.it.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A charge whose id the database assigns on insert (an identity column). */
@Entity
@Table(name = "jpa_identity_charges")
public class IdentityCharge {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    private String idemKey;

    public IdentityCharge() {
    }

    IdentityCharge(String idemKey) {
        this.idemKey = idemKey;
    }

    public Long getId() {
        return id;
    }

    public String getIdemKey() {
        return idemKey;
    }
}
