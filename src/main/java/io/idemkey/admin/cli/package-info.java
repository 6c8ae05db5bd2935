/**
 * The operators' command line tool ({@link io.idemkey.admin.cli.IdemkeyAdmin}): the admin API's
 * look-up, purge and stuck list, straight against a store URL.
 */
package io.idemkey.admin.cli;
