/**
 * @peculiar/x509, loaded the one way it works: it resolves its services with tsyringe, which
 * needs the Reflect metadata API (reflect-metadata) before it is evaluated. Import X.509 from
 * here, never from "@peculiar/x509" directly.
 */
import "reflect-metadata";

export * from "@peculiar/x509";
