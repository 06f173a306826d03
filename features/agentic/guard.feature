@AISIM-1893 @AGX-6
Feature: The agentic G2 guard admits any worker counts and rejects what AgentX G2 cannot run

  AgentX G2 used to be limited to one aggregated worker or one prefill + one decode worker. It now
  runs on any number of aggregated, prefill or decode workers, but every role must use the vLLM
  backend, attention DP 1, a static worker pool, no speculative decoding and no G3 (disk) tier.
  Anything else is rejected before the run, with a message that names the rule.

  Background:
    Given a cluster of 2 aggregated workers with these settings:
      | block size          | 4 tokens           |
      | GPU blocks per rank | 16                 |
      | KV bytes per token  | 250000             |
      | prefill pass        | 1 ms               |
      | decode pass         | 0.5 ms             |
      | host memory         | private, 16 blocks |
    And an agentic trace with 4-token trace blocks:
      | play  | request | session | input | output | hash ids | not before | after | on         | delay |
      | agent | ask     | main    | 9     | 2      | 1,2,3    | 0 ms       |       |            |       |
      | agent | resume  | main    | 13    | 2      | 1,2,3,4  | 0 ms       | ask   | completion | 10 ms |

  Scenario Outline: agentic G2 on <workers> is accepted
    Given the cluster is changed to <workers>
    When the agentic workload is submitted
    Then it is accepted and every request finishes

    Examples:
      | workers                        |
      | 3 aggregated workers           |
      | 1 prefill and 1 decode worker  |
      | 2 prefill and 3 decode workers |

  Scenario: agentic G2 is rejected when one role of several breaks a rule, though the first role keeps them all
    Given the cluster is changed to 1 prefill and 1 decode worker
    And the deployment is changed so that only the decode role uses the sglang backend
    When the agentic workload is submitted
    Then it is rejected before the run: "AGX-6: agentic G2 requires the vLLM backend on every role, not sglang"

  Scenario: agentic G2 is guarded when only a later role has host memory, and that role breaks a rule
    Given the cluster is changed to 1 prefill and 1 decode worker
    And the cluster has these settings:
      | host memory of decode workers | private, 16 blocks |
    And the deployment is changed so that only the decode role has host memory
    And the deployment is changed so that only the decode role uses the sglang backend
    When the agentic workload is submitted
    Then it is rejected before the run: "AGX-6: agentic G2 requires the vLLM backend on every role, not sglang"

  Scenario Outline: agentic G2 is rejected when <change>
    Given the deployment is changed so that <change>
    When the agentic workload is submitted
    Then it is rejected before the run: "<message>"

    Examples:
      | change                                           | message                                                                  |
      | every role uses the sglang backend               | AGX-6: agentic G2 requires the vLLM backend on every role, not sglang    |
      | every worker has 2 attention data-parallel ranks | AGX-6: agentic G2 requires attention DP = 1 on every role, not 2         |
      | the workers scale with the "planner" policy      | AGX-6: agentic G2 requires static worker pools; remove scaling_policy    |
      | the workers use speculative decoding             | AGX-6: agentic G2 does not support speculative decoding                  |
      | host memory has a disk tier below it             | AGX-6: agentic G2 does not support a G3 (disk) tier                      |
