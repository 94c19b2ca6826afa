/**
 * JSON values as plain data: parse trees (libpg-query's JSON form), import documents and other
 * structures that are read generically. The one declaration of this type in the project.
 */

/** A JSON value: `null`, a boolean, a finite number, a string, an array or an object of JSON values. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object: string keys to JSON values. */
export type JsonObject = { [key: string]: Json };
