// Schema hoisting: each resource's schemas moved out of the operations into `components.schemas`,
// named after the resource (`User`, `UserRepresentation`, `UserCreate`, `UserReplace`, `UserUpdate`),
// beside the answers' `meta` (`ResourceMeta`, `CollectionMeta`, a bulk write's `BulkMeta`), and pointed at with `$ref` from both
// versions' operations and from any other schema that holds one whole (an item embedded in another).
// A new resource then adds its own components and operations to the document; an item it embeds in
// another resource's changes that resource's representation once, not each operation that answers it.

/** An operation whose schemas are named after its resource. */
export interface HoistedOperation {
  path: string
  /** Upper case, as the route declares it. */
  method: string
  /** What one item is called ("user"): its components' names start with it, capitalized. */
  noun: string
  /** A GET answer shows the item as `select` and `include` ask: its `UserRepresentation`. */
  represented: boolean
  /** Its request body's component, where not `<Resource><Role>` (RouteOpenApi.body). */
  body?: string
}

type Schema = Record<string, unknown>
interface Media {
  schema?: unknown
}
interface OperationSchemas {
  requestBody?: { content?: Record<string, Media> }
  responses?: Record<string, { content?: Record<string, Media> }>
}
interface HoistableDocument {
  paths: Record<string, Record<string, unknown>>
  components?: { schemas?: Record<string, unknown> }
}

/** A request body's component, after its resource, by method. */
const BODY_ROLES: Readonly<Record<string, string>> = { POST: 'Create', PUT: 'Replace', PATCH: 'Update' }
/** Keys whose values are data, never schemas. */
const NOT_SCHEMAS = new Set(['example', 'examples', 'enum', 'const', 'default', 'required'])

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)
const refTo = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const pascalCase = (noun: string) =>
  noun
    .split(/[^A-Za-z0-9]+/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')

/**
 * Moves the operations' request and answer schemas into `components.schemas` and points at them.
 * A name already given to a different schema (or already in the document) leaves that occurrence
 * inline, as it was: the document says the same either way.
 */
export function hoistSchemas(document: HoistableDocument, operations: readonly HoistedOperation[]): void {
  if (operations.length === 0) return
  // A copy: @fastify/swagger may share one schema object between operations, which are pointed at one by one.
  document.paths = JSON.parse(JSON.stringify(document.paths)) as HoistableDocument['paths']
  const existing = document.components?.schemas ?? {}
  /** The hoisted schemas by name, as JSON; and the first name given to each. */
  const hoisted = new Map<string, string>()
  const nameOf = new Map<string, string>()
  const components: Record<string, Schema> = {}

  /** The `$ref` that replaces `schema` under `name`, or the schema itself where the name is taken. */
  const hoist = (name: string, schema: unknown): unknown => {
    if (!isSchema(schema) || name in existing) return schema
    const json = JSON.stringify(schema)
    const taken = hoisted.get(name)
    if (taken === undefined) {
      hoisted.set(name, json)
      if (!nameOf.has(json)) nameOf.set(json, name)
      components[name] = JSON.parse(json) as Schema
    } else if (taken !== json) {
      return schema
    }
    return refTo(name)
  }

  for (const { path, method, noun, represented, body } of operations) {
    const operation = document.paths[path]?.[method.toLowerCase()] as OperationSchemas | undefined
    if (operation === undefined) continue
    const resource = pascalCase(noun)
    const bodyRole = BODY_ROLES[method]
    for (const media of Object.values(operation.requestBody?.content ?? {})) {
      if (bodyRole !== undefined) media.schema = hoist(body ?? `${resource}${bodyRole}`, media.schema)
    }
    const item = method === 'GET' && represented ? `${resource}Representation` : resource
    for (const response of Object.values(operation.responses ?? {})) {
      const answer = response.content?.['application/json']?.schema
      // A create's 201 is one of two envelopes (src/http/bulk-create.ts): the resource, or a bulk write's resources.
      const union = isSchema(answer) && Array.isArray(answer.anyOf)
      for (const envelope of union ? (answer.anyOf as unknown[]) : [answer]) {
        const properties = isSchema(envelope) && isSchema(envelope.properties) ? envelope.properties : undefined
        if (properties === undefined || !isSchema(properties.data)) continue
        const list = properties.data.type === 'array' ? properties.data : undefined
        if (list === undefined) properties.data = hoist(item, properties.data)
        else list.items = hoist(item, list.items)
        if (properties.meta !== undefined) properties.meta = hoist(list === undefined ? 'ResourceMeta' : union ? 'BulkMeta' : 'CollectionMeta', properties.meta)
      }
    }
  }

  // Any other place that holds a hoisted schema whole points at it too.
  const hoistedSchemas = { byJson: nameOf, keys: new Set(Object.values(components).map(keysOf)) }
  pointAtComponents(document.paths, hoistedSchemas)
  for (const component of Object.values(components)) pointAtComponents(component, hoistedSchemas)
  document.components = { ...document.components, schemas: { ...existing, ...components } }
}

/** The names of an object's keys, in order: two schemas with different keys differ, and this is cheaper than their JSON. */
const keysOf = (schema: object) => Object.keys(schema).join()

/** Replaces each value under `node` that is a hoisted schema with a `$ref` to it; the largest first. */
function pointAtComponents(node: Record<string, unknown> | unknown[], hoisted: { byJson: ReadonlyMap<string, string>; keys: ReadonlySet<string> }): void {
  for (const [key, value] of Object.entries(node)) {
    if (typeof value !== 'object' || value === null || (!Array.isArray(node) && NOT_SCHEMAS.has(key))) continue
    const name = Array.isArray(value) || !hoisted.keys.has(keysOf(value)) ? undefined : hoisted.byJson.get(JSON.stringify(value))
    if (name !== undefined) (node as Record<string, unknown>)[key] = refTo(name)
    else pointAtComponents(value as Record<string, unknown> | unknown[], hoisted)
  }
}
