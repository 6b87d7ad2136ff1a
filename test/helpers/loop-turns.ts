/**
 * Counts the event loop's turns from now until the returned function is called, which gives the
 * count: work that runs in one turn (synchronous statements chained by microtasks) leaves it low,
 * whatever its length.
 */
export function countLoopTurns(): () => number {
  let turns = 0
  let counting = true
  const count = () => {
    turns++
    if (counting) setImmediate(count)
  }
  setImmediate(count)
  return () => {
    counting = false
    return turns
  }
}
