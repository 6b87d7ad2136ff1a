// For tests of the pipeline's order (test/http/pipeline.test.ts): while a stage registers, every
// hook it adds is wrapped to tell the observer, as it runs, which stage and hook it is, and so is
// every hook its onRoute steps give a route. Without an observer nothing is wrapped: the hooks a
// request meets are the stages' own.
import type { FastifyInstance } from 'fastify'

/** Told of each stage's hook as it runs. */
export type PipelineObserver = (stage: string, hook: string) => void

/** The hooks of a request's lifecycle, as a route's options may hold them too. */
const REQUEST_HOOKS = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse'] as const

type Hook = (this: unknown, ...args: unknown[]) => unknown
type RouteHooks = Partial<Record<(typeof REQUEST_HOOKS)[number], Hook | Hook[]>>

const isRequestHook = (name: string): name is (typeof REQUEST_HOOKS)[number] => (REQUEST_HOOKS as readonly string[]).includes(name)

/** Runs `register` with the hooks it adds to `app` told to `observe` (the stage's name); without `observe`, runs it as it is. */
export function observeHooks<T>(app: FastifyInstance, stage: string, observe: PipelineObserver | undefined, register: () => T): T {
  if (observe === undefined) return register()
  const told = (hook: string, fn: Hook): Hook =>
    function (this: unknown, ...args: unknown[]) {
      observe(stage, hook)
      return fn.apply(this, args)
    }
  const rewrites = (fn: Hook): Hook =>
    function (this: unknown, route: unknown) {
      const hooks = route as RouteHooks
      const before = new Map(REQUEST_HOOKS.map((name) => [name, new Set([hooks[name] ?? []].flat())]))
      const result = fn.call(this, route)
      for (const name of REQUEST_HOOKS) {
        const added = hooks[name]
        if (added === undefined) continue
        hooks[name] = [added].flat().map((hook) => (before.get(name)?.has(hook) === true ? hook : told(name, hook)))
      }
      return result
    }
  const target = app as unknown as { addHook: (name: string, fn: Hook) => unknown }
  const addHook = target.addHook
  target.addHook = function (this: unknown, name: string, fn: Hook) {
    return addHook.call(this, name, isRequestHook(name) ? told(name, fn) : name === 'onRoute' ? rewrites(fn) : fn)
  }
  const restore = () => {
    target.addHook = addHook
  }
  let result: T
  try {
    result = register()
  } catch (error) {
    restore()
    throw error
  }
  if (result instanceof Promise) return result.finally(restore) as T
  restore()
  return result
}
