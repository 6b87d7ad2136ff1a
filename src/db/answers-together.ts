// PostgreSQL's answers, handed on together. Each pooled connection's answer is read in a callback
// of its own (its socket's), and the request waiting on it would go on there at once: serialize,
// hash, write its answer, then the next connection's callback, the next request. Answers that
// arrive in one turn of the event loop are handed on together instead, just after the loop has
// read every socket that was ready (its check phase, setImmediate), as the fair scheduler starts
// the handlers on SQLite: the same code then runs for one request after another while it is hot
// (CPU caches, branch predictors), and the process spent a fifth less CPU a request on GET one user
// (docs/performance.md has the figures). An answer waits for no other: only for the loop to finish
// reading what had already arrived.

/** Hands `value` on at the loop's next check phase, together with every other value given in the meantime, in the order given. */
export type Together = <T>(value: T) => Promise<T>

export function answersTogether(): Together {
  let waiting: (() => void)[] = []
  const handOn = () => {
    const now = waiting
    waiting = []
    for (const resume of now) resume()
  }
  return <T>(value: T) =>
    new Promise<T>((resolve) => {
      if (waiting.push(() => resolve(value)) === 1) setImmediate(handOn)
    })
}
