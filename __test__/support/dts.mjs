// What index.d.ts declares, read as text: the members of an interface.

import fs from 'node:fs';

/**
 * `name: type` (and `name?: type`) lines of `export interface <name>` in the
 * declaration file, in order, comments left out; null when there is no such
 * interface.
 */
export function interfaceMembers(file, name) {
  const dts = fs.readFileSync(file, 'utf8');
  const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(dts)?.[1];
  if (body === undefined) return null;
  const withoutComments = body.replace(/\/\*\*[\s\S]*?\*\//g, '');
  return [...withoutComments.matchAll(/^ {2}(\w+)(\??): (.+)$/gm)].map(([, key, optional, type]) => `${key}${optional}: ${type}`);
}
