import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, parseDatabaseUrl } from '../src/config.js'

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 3000,
      database: { dialect: 'sqlite', path: 'data/threadline.db' },
      seedDemoData: true,
      logLevel: 'info',
      tokenTtlMs: 30 * 86_400_000,
    })
  })

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '8080',
      DATABASE_URL: 'sqlite:/var/lib/threadline/db.sqlite',
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'warn',
      TOKEN_TTL: '12h',
    })
    expect(config).toMatchObject({ host: '0.0.0.0', port: 8080, seedDemoData: false, logLevel: 'warn', tokenTtlMs: 12 * 3_600_000 })
    expect(config.database.path).toBe('/var/lib/threadline/db.sqlite')
  })

  it('is frozen', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true)
  })

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['SEED_DEMO_DATA', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['TOKEN_TTL', '30 days'],
    ['TOKEN_TTL', '0d'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'sqlite:'],
  ])('names the variable when %s=%s is wrong', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment variable ${name}: `))
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: ' ' })).toMatchObject({ port: 3000, logLevel: 'info' })
  })
})

describe('parseDatabaseUrl', () => {
  it.each([
    ['sqlite:data/threadline.db', 'data/threadline.db'],
    ['sqlite:/tmp/a.db', '/tmp/a.db'],
    ['sqlite:///tmp/a.db', '/tmp/a.db'],
    ['sqlite::memory:', ':memory:'],
  ])('reads %s as the file %s', (url, path) => {
    expect(parseDatabaseUrl(url)).toEqual({ dialect: 'sqlite', path })
  })

  it('says PostgreSQL is not supported yet rather than failing later', () => {
    expect(parseDatabaseUrl('postgres://localhost/threadline')).toMatch(/not supported/)
  })
})
