// Waiting for what has no promise of its own (a message on a socket, a counter of the app's, a
// line in a log): vitest's waitUntil, polling every 10 ms.
import { vi } from 'vitest'

/** Resolves once `condition` holds (checked every 10 ms); rejects after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  await vi.waitUntil(condition, { timeout: timeoutMs, interval: 10 })
}
