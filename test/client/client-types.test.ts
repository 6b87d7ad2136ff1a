// The client's generated files (its types, its table of resources) are what the generator makes of
// the document the server serves now: a route or schema change without `npm run client:types` fails
// here. And the items it answers are typed by the query's `select` and `include` (checked by the
// compiler: `npx tsc --noEmit`).
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { generateClientFiles } from '../../scripts/generate-client-types.js'
import { type Comment, createClient, type Post, type ThreadlineClient, type Todo, type User } from '../../src/client/index.js'
import { FEATURES } from '../../src/features.js'

it('has committed generated files (openapi.ts, resources.ts) that match the OpenAPI document the server serves', async () => {
  for (const [file, generated] of await generateClientFiles()) {
    const committed = await readFile(file, 'utf8')
    // Compared as a whole; on failure, run `npm run client:types` and commit src/client/.
    expect(committed === generated, `${relative(process.cwd(), file)} is stale: run \`npm run client:types\``).toBe(true)
  }
})

it('has helpers for every feature (src/features.ts), written by hand in src/client/create-client.ts', () => {
  const client = createClient({ baseUrl: 'http://127.0.0.1:1' })
  const missing = FEATURES.map(({ name }) => name).filter((name) => !(name in client))
  expect(missing, 'features the client has no helpers for: add them to src/client/create-client.ts').toEqual([])
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
