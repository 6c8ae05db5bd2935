package io.idemkey.it.client;

/** A transfer order: the operation's business id and an amount. */
public class Transfer {

    public String id;
    public long amount;

    public Transfer() {
    }

    public Transfer(String id, long amount) {
        this.id = id;
        this.amount = amount;
    }
}
