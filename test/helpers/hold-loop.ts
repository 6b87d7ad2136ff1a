/** Holds the event loop for `ms`, as a long synchronous statement (on SQLite) would. */
export function holdLoop(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}
