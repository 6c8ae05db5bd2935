package io.idemkey.it.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;

/**
 * A charge whose id comes from a sequence: {@code persist()} calls {@code nextval}, which writes no
 * row (and assigns a transaction id only now and then); the row is inserted when the persistence
 * context flushes, at commit.
 */
@Entity
@Table(name = "jpa_sequence_charges")
public class SequenceCharge {

    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "jpa_charge_ids")
    @SequenceGenerator(name = "jpa_charge_ids", sequenceName = "jpa_charge_ids", allocationSize = 1)
    private Long id;

    private String idemKey;

    public SequenceCharge() {
    }

    SequenceCharge(String idemKey) {
        this.idemKey = idemKey;
    }

    public Long getId() {
        return id;
    }

    public String getIdemKey() {
        return idemKey;
    }
}
