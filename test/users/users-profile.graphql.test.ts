// A user's profile over GraphQL: written by updateUser with the REST body's rules (an address or a
// company whole, null clearing it), read as the User's fields by anyone, filtered by username.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

const PROFILE = 'username phone website address { street suite city zipcode geo { lat lng } } company { name catchPhrase bs }'
const address = { street: 'Douglas Extension', suite: 'Suite 847', city: 'McKenziehaven', zipcode: '59590-4157', geo: { lat: '-68.6102', lng: '-47.0653' } }
const company = { name: 'Keebler LLC', catchPhrase: 'User-centric fault-tolerant solution', bs: 'revolutionize end-to-end systems' }

describe("a user's profile over GraphQL", () => {
  it('is written by updateUser, shown to anyone, and cleared by null', async () => {
    const written = await graphql(t, `mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id ${PROFILE} } }`, {
      token: t.tokens.bob,
      variables: { id: String(t.bob.id), input: { username: 'Samantha', phone: '1-463-123-4447', website: 'ramiro.info', address, company } },
    })
    expect(written.body.errors).toBeUndefined()
    const read = await graphql(t, `{ user(id: "${t.bob.id}") { ${PROFILE} } users(where: { username: { eq: "Samantha" } }) { id } }`)
    expect(read.body.data).toEqual({
      user: { username: 'Samantha', phone: '1-463-123-4447', website: 'ramiro.info', address, company },
      users: [{ id: String(t.bob.id) }],
    })
    const cleared = await graphql(t, `mutation { updateUser(id: "${t.bob.id}", input: { address: null, website: null }) { ${PROFILE} } }`, {
      token: t.tokens.bob,
    })
    expect(cleared.body.data?.updateUser).toMatchObject({ username: 'Samantha', website: null, address: null, company })
  })

  it('refuses what REST refuses, with VALIDATION_ERROR, and another user with FORBIDDEN', async () => {
    const long = await graphql(t, `mutation { updateUser(id: "${t.bob.id}", input: { username: "${'x'.repeat(101)}" }) { id } }`, { token: t.tokens.bob })
    expect(codesOf(long)).toEqual(['VALIDATION_ERROR'])
    const other = await graphql(t, `mutation { updateUser(id: "${t.alice.id}", input: { username: "mallory" }) { id } }`, { token: t.tokens.bob })
    expect(codesOf(other)).toEqual(['FORBIDDEN'])
  })
})
