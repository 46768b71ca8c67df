/** Bad usage or configuration: the CLI prints the message and exits 2, having started nothing. */
export class UsageError extends Error {}
