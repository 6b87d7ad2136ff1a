// What the GraphQL peers (Apollo Server, GraphQL Yoga) serve: the part of Threadline's schema the
// bench asks for, with plain resolvers over a copy of the same SQLite data set, the nested posts
// batched per request by DataLoader (as Threadline's loaders do), published ones only (what an
// anonymous caller sees of Threadline's) and capped at 20 per user (as Threadline's nested lists
// are). Both peers get these same type definitions and resolvers.
import Database from 'better-sqlite3'
import DataLoader from 'dataloader'

export const typeDefs = /* GraphQL */ `
  type Post {
    id: ID!
    title: String!
  }
  type User {
    id: ID!
    name: String!
    email: String!
    posts: [Post!]!
  }
  type Query {
    user(id: ID!): User
    users: [User!]!
  }
`

/** Resolvers over the SQLite file at `file`, and the per-request context they need. */
export function createResolvers(file) {
  const db = new Database(file, { readonly: true })
  const userById = db.prepare('select id, name, email from users where id = ?')
  const firstUsers = db.prepare('select id, name, email from users order by id limit 20')
  // One statement per batch size, prepared once (as Threadline keeps its statements).
  const postsStatements = new Map()
  const postsOf = (userIds) => {
    let statement = postsStatements.get(userIds.length)
    if (statement === undefined) {
      statement = db.prepare(
        `select id, title, user_id from (
           select id, title, user_id, row_number() over (partition by user_id order by id) as n
           from posts where status = 'published' and user_id in (${userIds.map(() => '?').join(', ')})
         ) where n <= 20 order by id`,
      )
      postsStatements.set(userIds.length, statement)
    }
    return statement.all(...userIds)
  }
  const resolvers = {
    Query: {
      user: (_parent, { id }) => userById.get(Number(id)) ?? null,
      users: () => firstUsers.all(),
    },
    User: {
      posts: (user, _args, context) => context.posts.load(user.id),
    },
  }
  const context = () => ({
    posts: new DataLoader(async (userIds) => {
      const byUser = new Map(userIds.map((id) => [id, []]))
      for (const post of postsOf(userIds)) byUser.get(post.user_id)?.push(post)
      return userIds.map((id) => byUser.get(id) ?? [])
    }),
  })
  return { resolvers, context }
}
