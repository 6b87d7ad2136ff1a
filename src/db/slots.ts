// Slots: where a value goes among a statement's parameters when the statement is compiled once and
// run with each request's values (compiled-statements.ts: an id; list-page.ts: a filter's values).
// Kysely passes a value it is given to the parameters as it is, so a slot lands exactly where the
// value would have.

/** Where a value of the arguments goes, among a compiled statement's parameters. */
export class Slot<A> {
  constructor(readonly take: (args: A) => unknown) {}
}

/** `parameters` with each slot's value for `args` in its place. */
export function withValues<A>(parameters: readonly unknown[], args: A): readonly unknown[] {
  return parameters.map((parameter) => (parameter instanceof Slot ? (parameter as Slot<A>).take(args) : parameter))
}
