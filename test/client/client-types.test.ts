// The client's generated files are what the generator makes of the OpenAPI document the server
// serves now: a route or schema change without `npm run client:types` fails here. Every resource of
// that document has its helpers, each sending its method to its path with the ids in order, and
// every operation of the document is sent by some helper. The table is read from the document by
// rules a new resource follows too (a throwaway document shows them). And the items the client
// answers are typed by the query's `select` and `include`, its helpers by the paths' parameters
// (checked by the compiler: `npx tsc --noEmit`).
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import type { OpenAPI3 } from 'openapi-typescript'
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { clientResources } from '../../scripts/client-resources.js'
import { fetchOpenApiDocument, generateClientFiles } from '../../scripts/generate-client-types.js'
import { type Comment, createClient, type IssuedToken, type Item, type Post, type ThreadlineClient, type Todo, type User } from '../../src/client/index.js'
import { RESOURCE_HELPERS } from '../../src/client/resource-helpers.js'
import { RESOURCES } from '../../src/client/resources.js'
import { FEATURES } from '../../src/features.js'

let document: OpenAPI3
beforeAll(async () => {
  document = await fetchOpenApiDocument()
})

it('has committed generated files (openapi.ts, resources.ts) that match the OpenAPI document the server serves', async () => {
  for (const [file, generated] of await generateClientFiles(document)) {
    const committed = await readFile(file, 'utf8')
    // Compared as a whole; on failure, run `npm run client:types` and commit src/client/.
    expect(committed === generated, `${relative(process.cwd(), file)} is stale: run \`npm run client:types\``).toBe(true)
  }
})

it('has a resource, under its name, for every feature of src/features.ts', () => {
  const missing = FEATURES.map(({ name }) => name).filter((name) => !(name in RESOURCES))
  expect(missing, 'features with no resource in src/client/resources.ts: their collection path ends in another name').toEqual([])
})

/** A client whose fetch records each request and answers it as the service would, without a service. */
function recordingClient(version: 'v1' | 'v2') {
  const requests: { method: string; path: string; query: string; body: unknown }[] = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    requests.push({ method: request.method, path: url.pathname, query: url.search, body: request.body === null ? undefined : await request.json() })
    if (request.method === 'DELETE') return new Response(null, { status: 204 })
    const meta = { timestamp: '2026-01-01T00:00:00.000Z', pagination: { nextCursor: null } }
    const listed = request.method === 'GET' && !/\/\d+$/.test(url.pathname)
    return Response.json({ data: listed ? [{ id: 1 }] : { id: 1 }, meta }, { status: request.method === 'POST' ? 201 : 200 })
  }
  return { client: createClient({ baseUrl: 'http://127.0.0.1:1', version, fetch, maxRetries: 0 }), requests }
}

/** `path` with its `{parameters}` as the ids 11, 12, 13… in order, under the version's prefix. */
const filled = (path: string, version: string) => {
  let next = 11
  return path.replace('/api/v1/', `/api/${version}/`).replace(/\{[^{}]+\}/g, () => String(next++))
}
const idsFor = (path: string) => Array.from(path.match(/\{[^{}]+\}/g) ?? [], (_, index) => 11 + index)

interface Address {
  readonly collection: { readonly path: string; readonly methods: readonly string[] }
  readonly item?: { readonly path: string; readonly methods: readonly string[] }
}

/**
 * Every helper the table could give each resource, at each of its items' addresses (`at` the other
 * addresses' collection paths), the path it would send to, and whether that path answers its method.
 */
const helperCalls = Object.entries(RESOURCES).flatMap(([resource, row]) => {
  const addresses: [string | undefined, Address][] = [
    [undefined, row],
    ...('also' in row ? row.also : []).map((other) => [other.collection.path, other] as [string, Address]),
  ]
  return addresses.flatMap(([at, address]) =>
    (['collection', 'item'] as const).flatMap((place) => {
      const target = place === 'item' ? address.item : address.collection
      const byMethod: Partial<Record<string, readonly string[]>> = RESOURCE_HELPERS[place]
      return Object.entries(byMethod).flatMap(([method, helpers]) =>
        (helpers ?? []).map((helper) => ({
          resource,
          at,
          helper,
          method,
          path: target?.path ?? '',
          answers: target?.methods.some((m) => m === method) ?? false,
        })),
      )
    }),
  )
})

type AnyHelper = (...args: unknown[]) => Promise<unknown> | AsyncIterable<unknown>
type AnyHelpers = Partial<Record<string, AnyHelper>> & { at?: (path: string) => Partial<Record<string, AnyHelper>> }
const helperOf = (client: ThreadlineClient, resource: string, helper: string, at?: string) => {
  const helpers = client[resource as keyof typeof RESOURCES] as unknown as AnyHelpers
  return (at === undefined ? helpers : helpers.at?.(at))?.[helper]
}

/** Awaits a helper's answer, or reads its iterator to the end. */
async function settle(answer: Promise<unknown> | AsyncIterable<unknown>): Promise<void> {
  if (!(Symbol.asyncIterator in answer)) return void (await answer)
  for await (const item of answer) void item
}

describe.each(['v1', 'v2'] as const)('the client speaking %s', (version) => {
  it('makes every resource of the table the helpers its paths answer, and no other, each sending its method to its path, the ids in order', async () => {
    const { client, requests } = recordingClient(version)
    for (const { resource, at, helper, method, path, answers } of helperCalls) {
      const call = helperOf(client, resource, helper, at)
      const name = at === undefined ? `${resource}.${helper}` : `${resource}.at('${at}').${helper}`
      expect(typeof call, name).toBe(answers ? 'function' : 'undefined')
      if (call === undefined) continue
      const last = method === 'get' ? { select: ['id'] } : method === 'delete' ? undefined : { field: 'value' }
      requests.length = 0
      await settle(call(...idsFor(path), ...(last === undefined ? [] : [last])))
      expect(requests, name).toEqual([
        {
          method: method.toUpperCase(),
          path: filled(path, version),
          query: method === 'get' ? '?select=id' : '',
          body: method === 'get' || method === 'delete' ? undefined : last,
        },
      ])
    }
  })

  it('sends every operation of the document through some helper (those the table has not, written by hand)', async () => {
    const { client, requests } = recordingClient(version)
    for (const { resource, at, helper, method, path } of helperCalls) {
      const call = helperOf(client, resource, helper, at)
      if (call !== undefined) await settle(call(...idsFor(path), ...(method === 'delete' ? [] : [{}])))
    }
    // The helpers written by hand in create-client.ts.
    await client.tokens.revokeCurrent()

    const sent = new Set(requests.map(({ method, path }) => `${method} ${path}`))
    const operations = Object.entries(document.paths ?? {}).flatMap(([path, operationsAt]) =>
      path.startsWith('/api/v1/')
        ? ['get', 'post', 'put', 'patch', 'delete'].filter((method) => method in operationsAt).map((method) => `${method.toUpperCase()} ${path}`)
        : [],
    )
    const unsent = operations.filter((operation) => {
      const [method = '', path = ''] = operation.split(' ')
      return !sent.has(`${method} ${filled(path, version)}`)
    })
    expect(unsent, 'operations no helper sends: a collection or item path for their tag, or a helper written in create-client.ts').toEqual([])
  })
})

describe('the table of resources', () => {
  /** A document with a top-level resource and one under it: albums, their labels, and an album's photos. */
  const fields = (names: string[]) => Object.fromEntries(names.map((name) => [name, { type: 'string' }]))
  const answer = (data: unknown) => ({ content: { 'application/json': { schema: { type: 'object', properties: { data } } } } })
  const include = (relations: string[]) => ({ name: 'include', in: 'query', schema: { type: 'array', items: { type: 'string', enum: relations } } })
  const photo = { type: 'object', properties: { ...fields(['id', 'url']), album: { $ref: '#/components/schemas/Album', description: 'With include=album.' } } }
  const shownAlbum = {
    type: 'object',
    properties: {
      ...fields(['id', 'title']),
      photos: { type: 'array', items: photo },
      labels: { type: 'array', items: { type: 'object', properties: fields(['label']) } },
    },
  }
  const throwaway = {
    tags: [{ name: 'Albums' }, { name: 'Album photos' }],
    paths: {
      '/api/v1/albums': {
        get: { tags: ['Albums'], responses: { 200: answer({ type: 'array', items: { $ref: '#/components/schemas/Album' } }) } },
        post: { tags: ['Albums'], responses: { 201: answer({ $ref: '#/components/schemas/Album' }) } },
      },
      '/api/v1/albums/{albumId}': {
        get: { tags: ['Albums'], parameters: [{ name: 'albumId', in: 'path' }, include(['photos', 'labels'])], responses: { 200: answer(shownAlbum) } },
        delete: { tags: ['Albums'], responses: { 204: {} } },
      },
      '/api/v1/albums/{albumId}/album-photos': {
        get: { tags: ['Album photos'], parameters: [include(['album'])], responses: { 200: answer({ type: 'array', items: photo }) } },
      },
      '/api/v1/albums/{albumId}/album-photos/current': { delete: { tags: ['Album photos'], responses: { 204: {} } } },
      '/api/v2/albums': { get: { tags: ['Albums'], responses: { 200: answer({ type: 'array', items: { type: 'object' } }) } } },
    },
    components: { schemas: { Album: { type: 'object', properties: fields(['id', 'title']) } } },
  }

  it("reads each tag's collection and item paths and the methods they answer, v1's only", () => {
    expect(clientResources(throwaway).map(({ name, collection, item }) => ({ name, collection, item }))).toEqual([
      {
        name: 'albums',
        collection: { path: '/api/v1/albums', methods: ['get', 'post'] },
        item: { path: '/api/v1/albums/{albumId}', methods: ['get', 'delete'] },
      },
      { name: 'albumPhotos', collection: { path: '/api/v1/albums/{albumId}/album-photos', methods: ['get'] }, item: undefined },
    ])
  })

  it('types each relation as the resource whose items have its fields, one or a list, or as none when no resource has them', () => {
    expect(Object.fromEntries(clientResources(throwaway).map(({ name, embeds }) => [name, embeds]))).toEqual({
      albums: { photos: { resource: 'albumPhotos', list: true }, labels: { resource: null, list: true } },
      albumPhotos: { album: { resource: 'albums', list: false } },
    })
  })

  it('refuses an operation without a tag, and two resources of one name', () => {
    const untagged = { paths: { '/api/v1/albums': { get: { responses: {} } } } }
    expect(() => clientResources(untagged)).toThrow(/GET \/api\/v1\/albums has no tag/)
    const twice = {
      paths: {
        '/api/v1/albums': { get: { tags: ['Albums'], responses: {} } },
        '/api/v1/users/{userId}/albums': { get: { tags: ['User albums'], responses: {} } },
      },
    }
    expect(() => clientResources(twice)).toThrow(/two resources are named albums/)
  })
})

/** Calls the types are read from; never run. */
function calls(client: ThreadlineClient) {
  return {
    postsSelected: client.posts.list(1, { select: ['title'], include: ['author'] }),
    postsWhole: client.posts.list(1),
    postsIncluded: client.posts.list(1, { include: ['author', 'comments'], 'comments.limit': 5 }),
    postSelected: client.posts.get(1, 2, { select: ['title', 'status'] }),
    postWhole: client.posts.get(1, 2),
    userIncluded: client.users.get(1, { select: ['name'], include: ['posts', 'todos'], 'posts.limit': 3 }),
    usersWhole: client.users.list({ page: 2 }),
    commentAuthor: client.comments.get(1, 2, 3, { include: ['author'] }),
    commentsSelected: client.comments.list(1, 2, { select: ['content'], include: ['post'] }),
    todoSelected: client.todos.get(1, 2, { select: ['completed'] }),
    commentsAll: client.comments.all(1, 2, { include: ['author'] }),
    postCreated: client.posts.create(1, { title: 'Hello', content: '' }),
    todoChanged: client.todos.update(1, 2, { completed: true }),
    userRemoved: client.users.remove(1),
    signedIn: client.tokens.create({ email: 'grace@example.com', password: 'secret' }),
    postAnywhere: client.posts.at('/api/v1/posts').get(2, { select: ['title'] }),
    postsOfUser: client.posts.at('/api/v1/posts').list({ userId: [1], include: ['author'] }),
    postCreatedForUser: client.posts.at('/api/v1/posts').create({ userId: 1, title: 'Hello', content: '' }),
    commentsOfPost: client.comments.at('/api/v1/posts/{postId}/comments').list(2),
  }
}
type Answers = { [K in keyof ReturnType<typeof calls>]: Awaited<ReturnType<typeof calls>[K]> }
type ItemOf<T> = T extends { data: (infer Item)[] } ? Item : never

describe('the typed client', () => {
  it('types items by select and include, and as the whole item without them', () => {
    expectTypeOf(calls).parameter(0).toEqualTypeOf<ThreadlineClient>()
    expectTypeOf<ItemOf<Answers['postsSelected']>>().toEqualTypeOf<Pick<Post, 'id' | 'title'> & { author: User }>()
    expectTypeOf<ItemOf<Answers['postsWhole']>>().toEqualTypeOf<Post>()
    expectTypeOf<ItemOf<Answers['postsIncluded']>>().toEqualTypeOf<Post & { author: User; comments: Comment[] }>()
    expectTypeOf<Answers['postSelected']>().toEqualTypeOf<Pick<Post, 'id' | 'title' | 'status'>>()
    expectTypeOf<Answers['postWhole']>().toEqualTypeOf<Post>()
    expectTypeOf<Answers['userIncluded']>().toEqualTypeOf<Pick<User, 'id' | 'name'> & { posts: Post[]; todos: Todo[] }>()
    expectTypeOf<ItemOf<Answers['usersWhole']>>().toEqualTypeOf<User>()
    expectTypeOf<Answers['commentAuthor']>().toEqualTypeOf<Omit<Comment, 'author'> & { author: User }>()
    expectTypeOf<ItemOf<Answers['commentsSelected']>>().toEqualTypeOf<Pick<Comment, 'id' | 'content'> & { post: Post }>()
    expectTypeOf<Answers['todoSelected']>().toEqualTypeOf<Pick<Todo, 'id' | 'completed'>>()
    expectTypeOf<ReturnType<typeof calls>['commentsAll']>().toEqualTypeOf<AsyncGenerator<Omit<Comment, 'author'> & { author: User }, void, undefined>>()
  })

  it('types writes by their operations: the body sent, the item answered', () => {
    expectTypeOf<Answers['postCreated']>().toEqualTypeOf<Post>()
    expectTypeOf<Answers['todoChanged']>().toEqualTypeOf<Todo>()
    expectTypeOf<Answers['userRemoved']>().toEqualTypeOf<void>()
    expectTypeOf<Answers['signedIn']>().toEqualTypeOf<IssuedToken>()
    expectTypeOf<Item<'users'>>().toEqualTypeOf<User>()
  })

  it('types the other addresses of the same items (`at`) by their own paths: their ids, query and body, the same items', () => {
    expectTypeOf<Answers['postAnywhere']>().toEqualTypeOf<Pick<Post, 'id' | 'title'>>()
    expectTypeOf<ItemOf<Answers['postsOfUser']>>().toEqualTypeOf<Post & { author: User }>()
    expectTypeOf<Answers['postCreatedForUser']>().toEqualTypeOf<Post>()
    expectTypeOf<ItemOf<Answers['commentsOfPost']>>().toEqualTypeOf<Comment>()
    expectTypeOf((client: ThreadlineClient) => client.todos.at('/api/v1/todos').remove).returns.parameters.toEqualTypeOf<[number | string]>()
    const refused = (client: ThreadlineClient) => {
      // @ts-expect-error: a post's own address takes its id alone
      void client.posts.at('/api/v1/posts').get(1, 2)
      // @ts-expect-error: the users' list has no other address
      void client.users.at
      // @ts-expect-error: an address of other items
      void client.posts.at('/api/v1/comments')
      // @ts-expect-error: the shortcut to a post's comments only lists them
      void client.comments.at('/api/v1/posts/{postId}/comments').create(1, { content: 'x' })
    }
    void refused
  })

  it('takes an id for each parameter of the path, in order, and has no helper its paths do not answer', () => {
    expectTypeOf<Parameters<ThreadlineClient['comments']['remove']>>().toEqualTypeOf<[number | string, number | string, number | string]>()
    expectTypeOf<Parameters<ThreadlineClient['users']['remove']>>().toEqualTypeOf<[number | string]>()
    expectTypeOf<ThreadlineClient['comments']>().not.toHaveProperty('replace')
    expectTypeOf<ThreadlineClient['todos']>().not.toHaveProperty('replace')
    expectTypeOf<ThreadlineClient['tokens']>().not.toHaveProperty('list')
    const refused = (client: ThreadlineClient) => {
      // @ts-expect-error: a post is at two ids, a user's and its own
      void client.posts.get(1)
      // @ts-expect-error: a comment's path has three ids; the fourth argument is no query
      void client.comments.get(1, 2, 3, 4)
      // @ts-expect-error: a user's posts are listed under one id
      void client.posts.list(1, 2)
      // @ts-expect-error: a todo is created with a body
      void client.todos.create(1)
      // @ts-expect-error: comments are not replaced, only changed
      void client.comments.replace(1, 2, 3, { content: 'x' })
      // @ts-expect-error: all() follows the cursor itself
      void client.users.all({ cursor: 'abc' })
    }
    expectTypeOf(refused).toBeFunction()
  })

  it('refuses names a resource does not have', () => {
    const refused = (client: ThreadlineClient) => {
      // @ts-expect-error: posts have no field `password`
      void client.posts.list(1, { select: ['password'] })
      // @ts-expect-error: todos embed nothing
      void client.todos.list(1, { include: ['author'] })
      // @ts-expect-error: `author` is not a list, it has no limit
      void client.posts.get(1, 2, { include: ['author'], 'author.limit': 2 })
    }
    expectTypeOf(refused).toBeFunction()
  })

  it('keeps the plain types strict: every field required', () => {
    expectTypeOf<Post['title']>().toEqualTypeOf<string>()
    expectTypeOf<User['email']>().toEqualTypeOf<string>()
  })
})
