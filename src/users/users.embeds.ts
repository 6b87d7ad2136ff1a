// What a user's GET answers may embed (`include`): what other features offer (their posts and
// todos, src/features.ts wires them in); and the item schema those answers are written with.
import type { Embeddable } from '../collections/embedding.js'
import { type EmbeddedRelations, embeddedRelations, embeddedSchemas } from '../feature.js'
import { Represented } from '../http/representation.js'
import { User } from './users.schemas.js'

/** A user in a GET answer: the fields `select` keeps, and each embedded relation when included. */
export const representedUser = (embedded: EmbeddedRelations) => Represented(User, embeddedSchemas(embedded))

/** The relations of a user: each read through the offering feature's service (its visibility rules). */
export const userEmbeds = (embedded: EmbeddedRelations): Embeddable<User> => ({
  fields: Object.keys(User.properties),
  relations: embeddedRelations(embedded),
})
