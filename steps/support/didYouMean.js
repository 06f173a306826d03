// Cucumber's snippet syntax for this project (cucumber.js: formatOptions.snippetSyntax): an undefined
// or misspelt step's message leads with the three nearest existing steps in words (those that fit
// the scenario's level first, as undefinedSteps.ts recorded it) and keeps cucumber's own JavaScript
// snippet below, for developers. The ranking and wording are src/signoff/suggest.ts and the phrases
// in words steps/support/phraseWords.ts (loaded through tsx, so the compiled profile uses the same),
// over the step definitions cucumber loaded for this run.
'use strict';
const path = require('node:path');
const { supportCodeLibraryBuilder } = require('@cucumber/cucumber');
const JavaScriptSnippetSyntax = require('@cucumber/cucumber/lib/formatter/step_definition_snippet_builder/javascript_snippet_syntax').default;

/** Loaded at the first undefined step (cucumber loads this file in every run; most runs have none). */
function load() {
  const tsx = require('tsx/cjs/api');
  const from = (file) => tsx.require(path.join(__dirname, '..', '..', file), __filename);
  return { suggest: from('src/signoff/suggest.ts'), phrases: from('steps/support/phraseWords.ts') };
}

const INFO = Symbol.for('kvqual.stepInfo');
const LEVELS = Symbol.for('kvqual.undefinedStepLevels');

class DidYouMeanSyntax {
  constructor(snippetInterface) {
    this.snippet = new JavaScriptSnippetSyntax(snippetInterface);
  }

  build(options) {
    const { suggest, phrases } = load();
    const candidates = (supportCodeLibraryBuilder.stepDefinitionConfigs || []).map((config) => {
      const info = (config.code && config.code[INFO]) || {};
      const phrase = typeof config.pattern === 'string' ? config.pattern : config.pattern.source;
      return { phrase, words: info.words || phrases.wordsOf(phrase), level: info.level || 'either' };
    });
    const source = options.generatedExpressions.length > 0 ? options.generatedExpressions[0].source : '';
    const level = (globalThis[LEVELS] && globalThis[LEVELS].get(suggest.comparable(source))) || null;
    const text = source.replace(/\{[^}]*\}/g, '…');
    return suggest.undefinedStepMessage(text, suggest.nearestSteps(source, candidates, level), level, this.snippet.build(options));
  }
}

module.exports = DidYouMeanSyntax;
