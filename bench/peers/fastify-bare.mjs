// The bare REST reference: what Fastify 5 and better-sqlite3 do with none of Threadline's
// conventions. No hooks, no plugins; plain statements prepared once; a response schema on each
// route (so Fastify serializes as Threadline's routes do); the same {data, meta} envelope and the
// same fields as Threadline's v1, so the suite can check that both answer the same rows.
//
//   DATABASE_FILE=... node bench/peers/fastify-bare.mjs   (PORT; prints "listening on http://host:port")
//
// It writes (POST), so it opens the file as Threadline does its own: WAL, synchronous=NORMAL. It is
// started before the read-only GraphQL peers, which then open the file already in WAL mode.
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { notFound, page, post, PROFILE_COLUMNS, single, user, userOf } from './rest-schemas.mjs'

const db = new Database(process.env.DATABASE_FILE)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('foreign_keys = ON')
db.pragma('busy_timeout = 5000')

const userColumns = `id, name, email, age, avatar, role, ${PROFILE_COLUMNS}, created_at as createdAt, updated_at as updatedAt`
const userById = db.prepare(`select ${userColumns} from users where id = ?`)
// The page Threadline's `?role=user&sort=name&limit=20` reads (its index: role, name, id), and the count beside it.
const usersPage = db.prepare(`select ${userColumns} from users where role = ? order by name, id limit ? offset ?`)
const usersCount = db.prepare('select count(*) as total from users where role = ?').pluck()
const updateUser = db.prepare(`update users set age = ?, updated_at = ? where id = ? returning ${userColumns}`)
const insertPost = db.prepare(
  `insert into posts (user_id, title, content, status, published_at, created_at, updated_at) values (?, ?, ?, 'published', ?, ?, ?)
   returning id, user_id as userId, title, content, status, published_at as publishedAt, created_at as createdAt, updated_at as updatedAt`,
)

const app = Fastify({ logger: false })

app.get('/api/v1/users/:id', { schema: { response: { 200: single(user) } } }, async (request, reply) => {
  const row = userOf(userById.get(Number(request.params.id)))
  if (row === undefined) return notFound(reply)
  return { data: row, meta: { timestamp: new Date().toISOString() } }
})

app.patch('/api/v1/users/:id', { schema: { response: { 200: single(user) } } }, async (request, reply) => {
  const now = new Date().toISOString()
  const row = userOf(updateUser.get(request.body.age, now, Number(request.params.id)))
  if (row === undefined) return notFound(reply)
  return { data: row, meta: { timestamp: now } }
})

app.get('/api/v1/users', { schema: { response: { 200: page(user) } } }, async (request) => {
  const page = Math.max(1, Number(request.query.page ?? 1) || 1)
  const limit = Math.min(100, Math.max(1, Number(request.query.limit ?? 20) || 20))
  const role = request.query.role ?? 'user'
  const data = usersPage.all(role, limit, (page - 1) * limit).map(userOf)
  const total = usersCount.get(role)
  return { data, meta: { timestamp: new Date().toISOString(), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } } }
})

app.post('/api/v1/users/:id/posts', { schema: { response: { 201: single(post) } } }, async (request, reply) => {
  const now = new Date().toISOString()
  const { title, content } = request.body
  const row = insertPost.get(Number(request.params.id), title, content, now, now, now)
  return reply.code(201).send({ data: row, meta: { timestamp: now } })
})

const url = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
console.log(`listening on ${url}`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
