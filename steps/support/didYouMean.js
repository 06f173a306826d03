// Cucumber's snippet syntax for this project (cucumber.js: formatOptions.snippetSyntax): an undefined
// or misspelt step gets the three nearest existing phrases instead of a JavaScript snippet, in
// cucumber's console and HTML report. The ranking is src/signoff/suggest.ts (loaded through tsx, so
// the compiled profile uses the same), over the step definitions cucumber loaded for this run.
'use strict';
const path = require('node:path');
const { supportCodeLibraryBuilder } = require('@cucumber/cucumber');

/** Loaded at the first undefined step (cucumber loads this file in every run; most runs have none). */
function ranking() {
  const tsx = require('tsx/cjs/api');
  return tsx.require(path.join(__dirname, '..', '..', 'src', 'signoff', 'suggest.ts'), __filename).didYouMean;
}

class DidYouMeanSyntax {
  build({ generatedExpressions }) {
    const phrases = (supportCodeLibraryBuilder.stepDefinitionConfigs || []).map((config) => String(config.pattern));
    const text = generatedExpressions.length > 0 ? generatedExpressions[0].source : '';
    return ranking()(text, phrases);
  }
}

module.exports = DidYouMeanSyntax;
