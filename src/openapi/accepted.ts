type Json = Record<string, unknown>;

/** Numeric text as the server reads it (catalog/coerce.ts NUMERIC, with the spaces it trims). */
const NUMBER_TEXT = '^\\s*[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?\\s*$';
/** true/false as text, in any case. */
const BOOLEAN_TEXT = '^\\s*(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\\s*$';

/** The text a client may send for one typed branch, or null when the branch takes no text form. */
function textForm(branch: Json): Json | null {
  if (branch.type === 'boolean') return { type: 'string', pattern: BOOLEAN_TEXT };
  if (branch.type !== 'integer' && branch.type !== 'number') return null;
  // A fixed list of numbers: exactly those numbers written out; a range: any numeric text (its value is checked like the number).
  if (Array.isArray(branch.enum)) {
    const values = branch.enum.map((v) => String(v).replace(/[.+]/g, '\\$&')).join('|');
    return { type: 'string', pattern: `^\\s*\\+?(?:${values})(?:\\.0*)?\\s*$` };
  }
  return { type: 'string', pattern: NUMBER_TEXT };
}

/** One property's schema widened with the text forms of its number and boolean branches. */
function widened(property: Json): Json {
  if (Array.isArray(property.anyOf)) {
    const branches = property.anyOf as Json[];
    const extra = branches.map(textForm).filter((b): b is Json => b !== null);
    return extra.length ? { ...property, anyOf: [...branches, ...extra] } : property;
  }
  const text = textForm(property);
  if (!text) return property;
  // Keep the annotations (description, default) on the property; the type goes into the first branch.
  const { description, default: def, title, ...typed } = property;
  return {
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(def !== undefined ? { default: def } : {}),
    anyOf: [typed, text],
  };
}

/**
 * A model's input schema (the normalised form of /models) as createTask accepts it: numbers and
 * booleans may also come as text (DECISIONS §11, `duration: "5"`), so the document does not
 * refuse what the server takes. Returns a copy; the catalog's cached schema is left alone.
 */
export function acceptedInput(schema: Json): Json {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  return { ...schema, properties: Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, widened(p)])) };
}
