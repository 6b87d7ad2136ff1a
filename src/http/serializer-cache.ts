// Response serializers compiled once per schema in a process. Fastify compiles a serializer
// (fast-json-stringify: code generated, then new Function) for every response schema of every
// route, and many routes answer with the same schema (an item's envelope for GET, PUT and PATCH,
// each in every API version). The compiled function depends on nothing but the schema, the shared
// schemas it may reference and the serializer's options, so a second route with the same three gets
// the first one's function: the same code, compiled once (81 compilations of 13 schemas became 13,
// for one app). The same holds across apps built in one process: the test suite builds hundreds.
// The three are compared by their JSON: options that are functions would not be told apart, and
// this app sets none.
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
  return (route) => {
    const schemaKey = JSON.stringify(route.schema)
    let serialize = serializers.get(schemaKey)
    if (serialize === undefined) serializers.set(schemaKey, (serialize = compileHere(route) as Serialize))
    return serialize
  }
}
