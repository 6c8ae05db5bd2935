/**
 * The Java snippets of {@code README.md} and {@code docs/*.md}, as source files the build compiles.
 * Each snippet is a tagged region ({@code // tag::name[]} ... {@code // end::name[]}; a tag that
 * occurs several times is the concatenation of its parts) that a document names in the comment
 * before its block ({@code <!-- snippet: src/test/java/io/idemkey/docs/File.java#name -->});
 * {@link io.idemkey.docs.DocsSnippetsTest} fails when a block and its region differ, when a block
 * names no region, and when a region is shown nowhere. Change a snippet here, then paste it into
 * the document (the test prints the region it expects).
 */
package io.idemkey.docs;
