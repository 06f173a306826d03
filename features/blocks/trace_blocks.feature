@HASH-2
Feature: A trace's hash ids stand for whole blocks of tokens, whatever the engine's block size

  A Mooncake trace does not carry prompts: it names each 512-token block of a prompt by a hash id,
  and two requests with the same first ids share those tokens. kvqual turns each id into the same
  tokens every time, so an engine whose blocks are smaller, larger or not a divisor of the trace's
  still sees exactly the sharing the trace describes: every engine block that lies within the
  shared ids, and none that reaches past them.

  Scenario Outline: two prompts sharing 2 of their 3 trace blocks share <shared> of their <total> engine blocks of <size> tokens
    When the trace prompts with hash ids "1, 2, 3" and "1, 2, 4", 512 tokens per id, are cut into <size>-token blocks
    Then they share their first <shared> of their <total> blocks

    Examples:
      | size | shared | total | why                                                     |
      | 64   | 16     | 24    | eight engine blocks to a trace block                    |
      | 512  | 2      | 3     | one to one                                              |
      | 96   | 10     | 16    | the 11th block reaches past the 1,024 shared tokens     |
      | 1000 | 1      | 1     | one block of 1,000 tokens fits in the shared 1,024      |
      | 1024 | 1      | 1     | the block ends exactly where the prompts start to differ |

  Scenario: prompts whose first trace blocks differ share nothing, even where later ids agree
    When the trace prompts with hash ids "1, 2" and "3, 2", 512 tokens per id, are cut into 64-token blocks
    Then they share their first 0 of their 16 blocks
