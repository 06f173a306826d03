@HASH-1
Feature: Only complete blocks are cached, and a block is named by everything before it

  The engines reuse KV block by block. Only a block whose every token is known can be reused by
  another request, so the partial block at the end of a prompt is never cached. Each block is named
  by a sequence hash of its own tokens and of everything before it: two requests share a cached
  block only when their prompts agree up to that block's end, and the names are the same on every
  run and every machine, so a trace replays alike wherever it is run.

  Scenario Outline: a <length> prompt in 4-token blocks has <complete> cacheable blocks
    When a <length> prompt is cut into 4-token blocks
    Then it has <complete> complete blocks, and its last <left> tokens are not cached

    Examples:
      | length   | complete | left |
      | 3-token  | 0        | 3    |
      | 8-token  | 2        | 0    |
      | 10-token | 2        | 2    |

  Scenario: prompts that agree for 14 tokens share 3 blocks of 4, and nothing after their first difference
    Given the prefix "system prompt" is 14 tokens long
    When two prompts that start with "system prompt" and then differ are cut into 4-token blocks
    Then their first 3 blocks are the same, and no later block is

  Scenario: the same tokens after a different beginning are a different block
    Given the prefix "system prompt A" is 8 tokens long
    And the prefix "system prompt B" is 8 tokens long
    And the prefix "tool output" is 8 tokens long
    When the prompts "system prompt A" then "tool output", and "system prompt B" then "tool output", are cut into 4-token blocks
    Then their last 2 blocks hold the same tokens, yet no block of the two is the same

  @TOPO-2
  Scenario: a prompt sent again reuses its complete blocks from GPU memory, but not its partial last block
    Given a cluster of 1 aggregated worker with the reference rank profile
    And conversation "A" starts on worker 0 at 0 ms with a 10-token prompt and 1 output token
    When conversation "A"'s first prompt is sent again at 50 ms
    Then it reuses 8 tokens from G1

  Scenario: block hashes are the same on every machine
    When the trace prompt with hash ids "1, 2", 512 tokens per id, is cut into 64-token blocks
    Then its blocks have these hashes, on every machine:
      | block | sequence hash      | local hash         |
      | 1     | 0x5f86e84fe8b3a692 | 0xc97b3aa7a5ca6116 |
      | 8     | 0x6f66be51ac037104 | 0x96d444f174773fc7 |
      | 9     | 0x6157a5a587631d7a | 0x4c09b24d1b3e4b4b |
      | 16    | 0x294170c5e1f94e07 | 0x79263286fe0f13ee |
