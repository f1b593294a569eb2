"""A tiny chat model for the adapter tests and the LLM example: random weights, a tokenizer trained
here, nothing downloaded.

``tiny_model_and_tokenizer()`` gives a 2-layer ``Qwen2ForCausalLM`` and a ``PreTrainedTokenizerFast``
whose chat template is Qwen2.5's, byte for byte: TRL recognises that text (``supports_tool_calling``,
``add_response_schema``) and so parses ``<tool_call>`` blocks out of the model's replies as it would
for a real Qwen2.5. The byte-level BPE is trained in memory on the envs' demo prompts, so any text
encodes and the vocabulary stays small (a fast model).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import toolbench

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# As in Qwen2.5's tokenizer, the call markers are single tokens but not special: a decode that skips
# special tokens keeps them, so a reply's calls survive it.
CALL_TOKENS = ["<tool_call>", "</tool_call>"]
VOCAB_SIZE = 4096

# Qwen2.5's chat template (as TRL 1.16 ships it in trl/chat_templates/qwen2_5.jinja); TRL matches
# templates by exact text, so it is kept verbatim.
QWEN2_5_CHAT_TEMPLATE = (
    "{%- if tools %}\n"
    "    {{- '<|im_start|>system\\n' }}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- messages[0]['content'] }}\n"
    "    {%- else %}\n"
    "        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n"
    "    {%- endif %}\n"
    '    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'
    'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}\n'
    "    {%- for tool in tools %}\n"
    '        {{- "\\n" }}\n'
    "        {{- tool | tojson }}\n"
    "    {%- endfor %}\n"
    '    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments '
    'within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": '
    '<args-json-object>}\\n</tool_call><|im_end|>\\n" }}\n'
    "{%- else %}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
    "    {%- else %}\n"
    "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    "<|im_end|>\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{%- for message in messages %}\n"
    '    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or '
    '(message.role == "assistant" and not message.tool_calls) %}\n'
    "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
    '    {%- elif message.role == "assistant" %}\n'
    "        {{- '<|im_start|>' + message.role }}\n"
    "        {%- if message.content %}\n"
    "            {{- '\\n' + message.content }}\n"
    "        {%- endif %}\n"
    "        {%- for tool_call in message.tool_calls %}\n"
    "            {%- if tool_call.function is defined %}\n"
    "                {%- set tool_call = tool_call.function %}\n"
    "            {%- endif %}\n"
    '            {{- \'\\n<tool_call>\\n{"name": "\' }}\n'
    "            {{- tool_call.name }}\n"
    '            {{- \'", "arguments": \' }}\n'
    "            {{- tool_call.arguments | tojson }}\n"
    "            {{- '}\\n</tool_call>' }}\n"
    "        {%- endfor %}\n"
    "        {{- '<|im_end|>\\n' }}\n"
    '    {%- elif message.role == "tool" %}\n'
    '        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}\n'
    "            {{- '<|im_start|>user' }}\n"
    "        {%- endif %}\n"
    "        {{- '\\n<tool_response>\\n' }}\n"
    "        {{- message.content }}\n"
    "        {{- '\\n</tool_response>' }}\n"
    '        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}\n'
    "            {{- '<|im_end|>\\n' }}\n"
    "        {%- endif %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n"
)

# Text the model writes around its calls, so common JSON and call fragments are single tokens.
_CALL_TEXT = (
    '<tool_call>\n{"name": "search", "arguments": {"query": "red shoes", "value": 2}}\n</tool_call>\n'
    '<tool_response>\nOK\n</tool_response>\n{"type": "function", "function": {"name": "x", "description": '
    '"y", "parameters": {"type": "object", "properties": {}, "required": []}}}\n'
    "API.set_location(\"Lincoln\")\ncurl -X GET 'https://api.example.com/v1?q=1&units=metric'\n"
)


def _corpus() -> list[str]:
    """The envs' own words: each env's first demo prompts, its API docs and tool schemas, and the
    call syntax; prompts then take few tokens (a model's cost on a CPU grows with them)."""
    import json

    texts = [_CALL_TEXT]
    for spec in toolbench.TASKS:
        texts += [task.prompt for task in toolbench.load_tasks(spec.name, "demo")[:8]]
        for mode in spec.modes:
            env = spec.env_class()(mode=mode, split="demo")
            texts += [env.api_docs(), json.dumps(env.tools() or [])]
            env.close()
    return texts


@functools.cache
def _tokenizer(extra_texts: tuple[str, ...] = ()) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(_corpus() + list(extra_texts), trainer=trainer)
    bpe.add_tokens([AddedToken(token, special=False, normalized=False) for token in CALL_TOKENS])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
        padding_side="left",
        model_max_length=32_768,
    )
    tokenizer.chat_template = QWEN2_5_CHAT_TEMPLATE
    return tokenizer


@functools.cache
def _model_state(
    hidden_size: int = 32, num_layers: int = 2, extra_texts: tuple[str, ...] = ()
) -> tuple[Any, dict[str, Any]]:
    import torch
    from transformers import Qwen2Config

    tokenizer = _tokenizer(extra_texts)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32_768,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    return config, {k: v.clone() for k, v in model.state_dict().items()}


def tiny_model_and_tokenizer(
    hidden_size: int = 32, num_layers: int = 2, extra_texts: Sequence[str] = ()
) -> tuple[Any, Any]:
    """A fresh Qwen2 model (2 layers of width 32 unless told; the same random weights every call
    for a size) and the shared tokenizer.

    The tokenizer is built once per process (per ``extra_texts``: more text its BPE is trained on,
    so that text's words become whole tokens); the model is rebuilt from the cached weights each
    call, since a trainer updates the model it is given. A model trained to copy words from its
    prompt (the LLM example: a city into a call) learns it far sooner when each word is a token."""
    from transformers import Qwen2ForCausalLM

    config, state = _model_state(hidden_size, num_layers, tuple(extra_texts))
    model = Qwen2ForCausalLM(config)
    model.load_state_dict(state)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    return model, _tokenizer(tuple(extra_texts))
