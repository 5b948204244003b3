"""GRPO core: group advantages, the clipped policy loss, the plug-in hooks and the trainer."""

from compute.core.rl.advantages import ESTIMATORS, group_advantages, overlong_penalty, pass_at_k
from compute.core.rl.loss import LOSS_AGGS, aggregate, kl_k3, policy_loss
from compute.core.rl.plugins import LossContext, Plugin, PluginChain, RolloutSpec, TokenWeights
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer, RolloutBatch, TrainerState, concat_batches

__all__ = [
    "ESTIMATORS",
    "LOSS_AGGS",
    "GRPOConfig",
    "GRPOTrainer",
    "LossContext",
    "Plugin",
    "PluginChain",
    "RolloutBatch",
    "RolloutSpec",
    "TokenWeights",
    "TrainerState",
    "aggregate",
    "concat_batches",
    "group_advantages",
    "kl_k3",
    "overlong_penalty",
    "pass_at_k",
    "policy_loss",
]
