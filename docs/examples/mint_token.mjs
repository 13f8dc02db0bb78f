// SPDX-License-Identifier: Apache-2.0
// How a backend mints a scenecrdt access token (docs/AUTH.md) with node's crypto module only.
// node mint_token.mjs ALG KEY_FILE SUB SCENES ROLE TTL_S   ALG: HS256 (KEY_FILE: the secret
// file) or EdDSA / ES256 (KEY_FILE: the private key PEM); SCENES: a,b,c or '*'. Prints the token.
import { createHmac, sign } from 'node:crypto'
import { readFileSync } from 'node:fs'
const [alg, keyFile, sub, scenes, role, ttl] = process.argv.slice(2)
const b64url = (data) => Buffer.from(data).toString('base64url')
const now = Math.floor(Date.now() / 1000)
const claims = { sub, scenes: scenes.split(','), role, iat: now, exp: now + Number(ttl) }
const input = `${b64url(JSON.stringify({ alg, typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`
const key = readFileSync(keyFile, 'utf8')
const signature = alg === 'HS256'
  ? createHmac('sha256', key.replace(/[\r\n]+$/, '')).update(input).digest()
  : sign(alg === 'ES256' ? 'sha256' : null, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
console.log(`${input}.${b64url(signature)}`)
