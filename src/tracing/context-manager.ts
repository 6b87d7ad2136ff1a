// The active trace context of each chain of asynchronous work, kept by Node's AsyncLocalStorage:
// what lets a SQL statement or a Redis command find the span of the request it serves without
// being handed it. OpenTelemetry's own (AsyncLocalStorageContextManager) lives in a package of its
// own; this is the same idea in a few lines. Each app has its own, registered nowhere globally.
import { AsyncLocalStorage } from 'node:async_hooks'
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api'

export class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>()

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args))
  }

  /** `target` run in `context` whenever it is called (a function; anything else is returned as it is). */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target
    const run = target as (...args: unknown[]) => unknown
    const storage = this.storage
    return function (this: unknown, ...args: unknown[]) {
      return storage.run(context, () => run.apply(this, args))
    } as T
  }

  enable(): this {
    return this
  }

  disable(): this {
    this.storage.disable()
    return this
  }
}
