// The words of the sign-off's verdicts, on their own so that the model, the JSON schema and the
// narrowing rules (narrowed.ts) share them without importing one another.

/** The verdict of a run that passed every gate but was narrowed (narrowed.ts). */
export const NARROWED_VERDICT = 'PASSED — NOT A RELEASE SIGN-OFF';
