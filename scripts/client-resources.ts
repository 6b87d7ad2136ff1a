// The client's table of resources, read from the OpenAPI document the app serves: for each tag (a
// feature's resource), its collection path and item path under /api/v1, the HTTP methods each
// answers, and what `include` embeds in its items, typed as which resource. createClient builds
// every resource's helpers from it (src/client/create-client.ts), so a new resource needs no code
// in the client. Written to src/client/resources.ts by `npm run client:types`.

/** The HTTP methods a resource's helpers are made of, in the order the table lists them. */
export const RESOURCE_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
export type ResourceMethod = (typeof RESOURCE_METHODS)[number]

/** One resource of the client. */
export interface ClientResource {
  /** The client's property: the collection path's last segment, in camelCase (`users`, `todoLists`). */
  name: string
  /** The path that lists and creates (`/api/v1/users/{userId}/posts`), and the methods it answers. */
  collection: { path: string; methods: ResourceMethod[] }
  /** The collection's path and one `{parameter}` (`…/posts/{postId}`), when the resource has one. */
  item?: { path: string; methods: ResourceMethod[] }
  /** What `include` may embed: each relation as the resource whose items it holds (null: none has its fields), one or a list. */
  embeds: Record<string, { resource: string | null; list: boolean }>
  /**
   * The other addresses of the same items (`/api/v1/posts` beside `/api/v1/users/{userId}/posts`,
   * `/api/v1/posts/{postId}/comments`): each collection path of the tag that ends in the resource's
   * name, with its item path where it has one. The client's `at(path)` gives their helpers.
   */
  also?: { collection: { path: string; methods: ResourceMethod[] }; item?: { path: string; methods: ResourceMethod[] } }[]
}

type Schema = Record<string, unknown>
interface Operation {
  tags?: string[]
  parameters?: unknown[]
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>
}
/** The parts of an OpenAPI 3.1 document the table is read from. */
export interface ResourceDocument {
  tags?: readonly { name: string }[]
  paths?: object
  components?: object
}

/** The paths the table describes: v1's (v2 serves the same operations; the client rewrites the prefix). */
const VERSION_PREFIX = '/api/v1/'

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)
const segmentsOf = (path: string) => path.slice(VERSION_PREFIX.length).split('/')
const endsInLiteral = (path: string) => !(segmentsOf(path).at(-1) ?? '{').startsWith('{')
/** How many parents a path names (`/users/{userId}/posts`: one). */
const parametersOf = (path: string) => segmentsOf(path).filter((segment) => segment.startsWith('{')).length
const camelCase = (segment: string) => segment.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_, letter: string) => letter.toUpperCase())
/** The names of a schema's fields, as one string to compare. */
const fieldsOf = (schema: unknown) => (isSchema(schema) && isSchema(schema.properties) ? Object.keys(schema.properties).sort().join() : undefined)

/**
 * The document's resources, in the order of its tags. A tag's collection is the one of its paths
 * that ends in a literal segment under the most parents (a post under its author, not the top-level
 * `/posts` that serves the same items), the shortest among those, and names the resource; its item,
 * that path and one parameter. A tag's other paths (`/tokens/current`, the top-level addresses) are
 * not in the table: the client writes by hand what it offers of them.
 */
export function clientResources(document: ResourceDocument): ClientResource[] {
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>
  const schemas = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {}
  /** A schema, or the component its `$ref` points at. */
  const resolve = (schema: unknown): unknown => {
    const ref = isSchema(schema) && typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined
    return ref === undefined ? schema : resolve(schemas[ref])
  }
  const operation = (path: string | undefined, method: ResourceMethod) => (path === undefined ? undefined : (paths[path]?.[method] as Operation | undefined))
  const methodsOf = (path: string) => RESOURCE_METHODS.filter((method) => operation(path, method) !== undefined)
  /** The `data` of an operation's success: an item, or a page's list of them. */
  const answerData = (path: string | undefined, method: ResourceMethod) => {
    const responses = operation(path, method)?.responses ?? {}
    const envelope = resolve((responses['200'] ?? responses['201'])?.content?.['application/json']?.schema)
    return isSchema(envelope) && isSchema(envelope.properties) ? resolve(envelope.properties.data) : undefined
  }
  const elementOf = (list: unknown) => (isSchema(list) && list.type === 'array' ? resolve(list.items) : undefined)

  const resources = [...pathsByTag(paths, document.tags ?? [])].map(([tag, tagged]) => {
    const collection = tagged.filter(endsInLiteral).sort((a, b) => parametersOf(b) - parametersOf(a) || segmentsOf(a).length - segmentsOf(b).length)[0]
    if (collection === undefined) throw new Error(`the tag ${tag} has no path that ends in a literal segment: no collection to name the resource after`)
    const itemOf = (list: string) => tagged.find((path) => path.startsWith(`${list}/`) && /^\{[^/{}]+\}$/.test(path.slice(list.length + 1)))
    const item = itemOf(collection)
    const named = segmentsOf(collection).at(-1)
    const also = tagged
      .filter((path) => path !== collection && endsInLiteral(path) && segmentsOf(path).at(-1) === named)
      .map((path) => ({ collection: path, item: itemOf(path) }))
    return {
      name: camelCase(named ?? ''),
      collection,
      item,
      also,
      // A whole item: what the writes answer with; for a resource without writes, what its GETs do
      // (Item in src/client/client-types.ts reads the same).
      itemSchema:
        answerData(collection, 'post') ??
        answerData(item, 'put') ??
        answerData(item, 'patch') ??
        answerData(item, 'get') ??
        elementOf(answerData(collection, 'get')),
      // The GET whose `include` embeds relations, and an item as it shows one.
      represented:
        item === undefined || operation(item, 'get') === undefined
          ? { path: collection, shown: elementOf(answerData(collection, 'get')) }
          : { path: item, shown: answerData(item, 'get') },
    }
  })

  const taken = new Set<string>()
  for (const { name, collection } of resources) {
    if (taken.has(name)) throw new Error(`two resources are named ${name} (the last segment of ${collection}): the client cannot tell them apart`)
    taken.add(name)
  }

  // A relation holds the items of the resource whose item schema has its fields: the whole item, or
  // a comment's author, `{id, name}` without `include`, and every other field of a user optional.
  const resourceWithFields = (schema: unknown, relation: string) => {
    const fields = fieldsOf(resolve(schema))
    const found = resources.filter(({ itemSchema }) => fields !== undefined && fieldsOf(itemSchema) === fields).map(({ name }) => name)
    if (found.length > 1) throw new Error(`the relation ${relation} has the fields of ${found.join(' and ')}: which one it holds is not clear`)
    return found[0] ?? null
  }
  const embedsOf = (name: string, represented: { path: string; shown: unknown }) => {
    const include = operation(represented.path, 'get')?.parameters?.find(
      (parameter) => isSchema(parameter) && parameter.name === 'include' && parameter.in === 'query',
    )
    const relations = isSchema(include) && isSchema(include.schema) && isSchema(include.schema.items) ? include.schema.items.enum : []
    const fields = isSchema(represented.shown) && isSchema(represented.shown.properties) ? represented.shown.properties : {}
    return Object.fromEntries(
      (relations as string[]).map((relation) => {
        const schema = resolve(fields[relation])
        const list = isSchema(schema) && schema.type === 'array'
        return [relation, { resource: resourceWithFields(list ? schema.items : schema, `${name}.${relation}`), list }]
      }),
    )
  }

  const place = (collection: string, item: string | undefined) => ({
    collection: { path: collection, methods: methodsOf(collection) },
    ...(item === undefined ? {} : { item: { path: item, methods: methodsOf(item) } }),
  })
  return resources.map(({ name, collection, item, also, represented }) => ({
    name,
    ...place(collection, item),
    embeds: embedsOf(name, represented),
    ...(also.length === 0 ? {} : { also: also.map((other) => place(other.collection, other.item)) }),
  }))
}

/** The v1 paths of each tag (an operation's first), the document's tags first, in its order. */
function pathsByTag(paths: Record<string, Record<string, unknown>>, tags: readonly { name: string }[]): Map<string, string[]> {
  const byTag = new Map<string, string[]>(tags.map(({ name }) => [name, []]))
  for (const [path, operations] of Object.entries(paths)) {
    if (!path.startsWith(VERSION_PREFIX)) continue
    for (const method of RESOURCE_METHODS) {
      if (operations[method] === undefined) continue
      const tag = (operations[method] as Operation).tags?.[0]
      if (tag === undefined) throw new Error(`${method.toUpperCase()} ${path} has no tag: it belongs to no resource`)
      const tagged = byTag.get(tag) ?? []
      if (!tagged.includes(path)) tagged.push(path)
      byTag.set(tag, tagged)
    }
  }
  // A tag no v1 operation has (the document lists the tags of every version) names no resource.
  for (const [tag, tagged] of byTag) if (tagged.length === 0) byTag.delete(tag)
  return byTag
}

/** The text of src/client/resources.ts (before formatting): the table as a constant the types read. */
export function resourcesModule(resources: readonly ClientResource[]): string {
  const table = Object.fromEntries(resources.map(({ name, ...row }) => [name, row]))
  return [
    "// Generated by `npm run client:types` from the service's /openapi.json (scripts/client-resources.ts). Do not edit.",
    "// The client's resources: each one's collection and item paths, the methods they answer, and what",
    '// `include` embeds, typed as which resource. createClient makes each resource its helpers from its row.',
    '',
    `export const RESOURCES = ${JSON.stringify(table)} as const`,
    '',
  ].join('\n')
}
