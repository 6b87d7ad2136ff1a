// Response serializers compiled once per schema in a process. Fastify compiles a serializer
// (fast-json-stringify: code generated, then new Function) for every response schema of every
// route, and many routes answer with the same schema (an item's envelope for GET, PUT and PATCH,
// each in every API version). The compiled function depends on nothing but the schema, the shared
// schemas it may reference and the serializer's options, so a second route with the same three gets
// the first one's function: the same code, compiled once (81 compilations of 13 schemas became 13,
// for one app). The same holds across apps built in one process: the test suite builds hundreds.
// The three are compared by their JSON: options that are functions would not be told apart, and
// this app sets none.
//
// A union of objects told apart by the type of one property they all have (a create's 201: `data`
// the resource, or a bulk write's array of them) is compiled branch by branch, and each answer
// written by the branch its property's type names. fast-json-stringify chooses a union's branch by
// running a validator of each branch on the value: compiled on the first answer (35 ms for a
// post's 201, on the loop, in a server just started) and run on every one (3 µs a post).
import SerializerSelector from '@fastify/fast-json-stringify-compiler'

type SerializerFactory = ReturnType<typeof SerializerSelector>
type Serialize = (data: unknown) => string

const compile = SerializerSelector()

/** The compiled serializers, by the JSON of the shared schemas and options, then of the route's schema. */
const compiled = new Map<string, Map<string, Serialize>>()

/** Fastify's default serializer factory (`schemaController.compilersFactory.buildSerializer`), sharing what it compiled. */
export const buildSharedSerializer: SerializerFactory = (externalSchemas, serializerOptions) => {
  const compileHere = compile(externalSchemas, serializerOptions)
  const contextKey = JSON.stringify([externalSchemas ?? null, serializerOptions ?? null])
  let bySchema = compiled.get(contextKey)
  if (bySchema === undefined) compiled.set(contextKey, (bySchema = new Map<string, Serialize>()))
  const serializers = bySchema
  const compileRoute = (route: Parameters<ReturnType<SerializerFactory>>[0]): Serialize => {
    const union = byPropertyType(route.schema)
    if (union === undefined) return compileHere(route) as Serialize
    const branches = new Map(union.branches.map(([type, schema]) => [type, compileHere({ ...route, schema }) as Serialize]))
    // A value of none of the branches' types: the whole union's serializer refuses it as it would.
    let whole: Serialize | undefined
    const refuse = (data: unknown) => (whole ??= compileHere(route) as Serialize)(data)
    return (data) => (branches.get(jsonType((data as Record<string, unknown> | null)?.[union.property])) ?? refuse)(data)
  }
  return (route) => {
    const schemaKey = JSON.stringify(route.schema)
    let serialize = serializers.get(schemaKey)
    if (serialize === undefined) serializers.set(schemaKey, (serialize = compileRoute(route)))
    return serialize
  }
}

type JsonType = 'array' | 'object' | 'null' | 'string' | 'number' | 'boolean' | 'undefined'

const jsonType = (value: unknown): JsonType =>
  Array.isArray(value) ? 'array' : value === null ? 'null' : (typeof value as 'object' | 'string' | 'number' | 'boolean' | 'undefined')

interface SchemaObject {
  readonly type?: unknown
  readonly anyOf?: unknown
  readonly properties?: Record<string, SchemaObject>
  readonly required?: readonly string[]
}

/**
 * A union (`anyOf`) of object schemas that all require one property whose type (one JSON type
 * each, numbers excepted: 1 is both an integer and a number) differs from branch to branch: the
 * property and each branch by that type. Undefined for any other schema.
 */
function byPropertyType(schema: unknown): { property: string; branches: [JsonType, unknown][] } | undefined {
  const anyOf = (schema as SchemaObject | null)?.anyOf
  if (!Array.isArray(anyOf) || anyOf.length < 2) return undefined
  const objects = anyOf as SchemaObject[]
  if (!objects.every((branch) => branch.type === 'object' && branch.properties !== undefined)) return undefined
  for (const property of objects[0]!.required ?? []) {
    const types = objects.map((branch) => (branch.required?.includes(property) === true ? branch.properties![property]?.type : undefined))
    const distinct = new Set(types)
    const told = types.every((type) => typeof type === 'string' && type !== 'number' && type !== 'integer')
    if (told && distinct.size === types.length) return { property, branches: types.map((type, i) => [type as JsonType, objects[i]]) }
  }
  return undefined
}
