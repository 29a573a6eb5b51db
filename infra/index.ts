/**
 * Pulumi program entry (Pulumi.yaml `main`). The docker and azure platforms are provisioned here through Pulumi;
 * the local platform is provisioned by the harness itself (infra/local/) and needs no Pulumi CLI.
 *
 * Not implemented yet: the docker and azure programs (issue 4). Running `pulumi up` on any stack today fails
 * with this message rather than creating half a stack.
 */
throw new Error(
  "ingestbench: the docker and azure Pulumi programs are not implemented yet; local stacks run with `ingestbench bench --stack <name> <scenario>`",
);
