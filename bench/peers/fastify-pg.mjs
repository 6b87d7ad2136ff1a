// The bare REST reference on PostgreSQL: the routes of fastify-bare.mjs (the same envelope, fields
// and response schemas) over `pg`, with a pool of 10 connections (Threadline's default) and each
// statement a named prepared statement, parsed once per connection.
//
//   DATABASE_URL=postgres://... node bench/peers/fastify-pg.mjs   (PORT; prints "listening on http://host:port")
import Fastify from 'fastify'
import pg from 'pg'
import { notFound, page, post, PROFILE_COLUMNS, single, user, userOf } from './rest-schemas.mjs'

// Instants as ISO 8601 text in UTC, as Threadline answers them.
pg.types.setTypeParser(1184, (text) => new Date(text).toISOString())
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })

const userColumns = `id, name, email, age, avatar, role, ${PROFILE_COLUMNS}, created_at as "createdAt", updated_at as "updatedAt"`
const postColumns = 'id, user_id as "userId", title, content, status, published_at as "publishedAt", created_at as "createdAt", updated_at as "updatedAt"'
const statement = (name, text) => (values) => pool.query({ name, text, values })
const userById = statement('user-by-id', `select ${userColumns} from users where id = $1`)
const usersPage = statement('users-page', `select ${userColumns} from users where role = $1 order by name, id limit $2 offset $3`)
const usersCount = statement('users-count', 'select count(*)::int as total from users where role = $1')
const updateUser = statement('update-user', `update users set age = $2, updated_at = $3 where id = $1 returning ${userColumns}`)
const insertPost = statement(
  'insert-post',
  `insert into posts (user_id, title, content, status, published_at, created_at, updated_at) values ($1, $2, $3, 'published', $4, $4, $4) returning ${postColumns}`,
)

const app = Fastify({ logger: false })

app.get('/api/v1/users/:id', { schema: { response: { 200: single(user) } } }, async (request, reply) => {
  const { rows } = await userById([Number(request.params.id)])
  if (rows.length === 0) return notFound(reply)
  return { data: userOf(rows[0]), meta: { timestamp: new Date().toISOString() } }
})

app.patch('/api/v1/users/:id', { schema: { response: { 200: single(user) } } }, async (request, reply) => {
  const { rows } = await updateUser([Number(request.params.id), request.body.age, new Date().toISOString()])
  if (rows.length === 0) return notFound(reply)
  return { data: userOf(rows[0]), meta: { timestamp: new Date().toISOString() } }
})

app.get('/api/v1/users', { schema: { response: { 200: page(user) } } }, async (request) => {
  const page = Math.max(1, Number(request.query.page ?? 1) || 1)
  const limit = Math.min(100, Math.max(1, Number(request.query.limit ?? 20) || 20))
  const role = request.query.role ?? 'user'
  const [{ rows: data }, { rows: counted }] = await Promise.all([usersPage([role, limit, (page - 1) * limit]), usersCount([role])])
  const total = counted[0].total
  return { data: data.map(userOf), meta: { timestamp: new Date().toISOString(), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } } }
})

app.post('/api/v1/users/:id/posts', { schema: { response: { 201: single(post) } } }, async (request, reply) => {
  const now = new Date().toISOString()
  const { title, content } = request.body
  const { rows } = await insertPost([Number(request.params.id), title, content, now])
  return reply.code(201).send({ data: rows[0], meta: { timestamp: now } })
})

const url = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
console.log(`listening on ${url}`)
process.on('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))))
