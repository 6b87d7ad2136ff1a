// Conditional writes (If-Match), transport-neutral: a write may carry a check of the current
// representation, which the service runs inside the write's transaction, after loading and
// authorizing and before writing. Two clients racing with the same check cannot both win.
import { AppError } from '../errors.js'

export interface WriteOptions<T> {
  /** True when the current representation is the one the caller expects. */
  ifMatch?: ((current: T) => boolean) | undefined
}

export function checkPrecondition<T>(options: WriteOptions<T> | undefined, current: () => T): void {
  if (options?.ifMatch !== undefined && !options.ifMatch(current())) {
    throw new AppError('PRECONDITION_FAILED', 'The resource has changed since you read it: read it again (If-Match)')
  }
}
