# Synthetic F16 GGUF from an HF config.json, laid out as llama.cpp's loaders expect.
import sys, json, numpy as np
import os
sys.path.insert(0, os.path.join(os.environ.get('LC', '.'), 'gguf-py'))  # the gguf-py of the llama.cpp tree
import gguf

def main(cfg_path, arch, out, layers=None):
    c = json.load(open(cfg_path))
    if 'text_config' in c: c = {**c, **c['text_config']}
    if arch == 'falcon':  # RWForCausalLM names; MQA unless n_head_kv; MLP of 4 x hidden; tied
        c = {**c, 'num_hidden_layers': c['n_layer'], 'num_attention_heads': c['n_head'],
             'num_key_value_heads': c.get('n_head_kv', 1 if c.get('multi_query') else c['n_head']),
             'intermediate_size': 4 * c['hidden_size'], 'tie_word_embeddings': True, 'layer_norm_eps': c['layer_norm_epsilon']}
    L = layers or c['num_hidden_layers']
    h = c['hidden_size']; nh = c['num_attention_heads']; nkv = c.get('num_key_value_heads', nh)
    hd = c.get('head_dim') or h // nh
    ff = c.get('intermediate_size'); V = c['vocab_size']
    tied = c.get('tie_word_embeddings', arch in ('gemma', 'gemma2', 'gemma3', 'gemma4'))
    w = gguf.GGUFWriter(out, arch)
    w.add_block_count(L); w.add_context_length(c.get('max_position_embeddings', 4096))
    w.add_embedding_length(h); w.add_feed_forward_length(ff or 0)
    w.add_head_count(nh); w.add_head_count_kv(nkv)
    w.add_key_length(hd); w.add_value_length(hd)
    w.add_rope_freq_base(float(c.get('rope_theta', 10000.0)))
    w.add_rope_dimension_count(c['qk_rope_head_dim'] if arch in ('deepseek2', 'deepseek32', 'glm-dsa') else int(hd * c.get('partial_rotary_factor', c.get('rotary_pct', 1.0))))
    if arch == 'gptneox': w.add_parallel_residual(c.get('use_parallel_residual', True))
    eps = c.get('rms_norm_eps', c.get('layer_norm_eps', 1e-5))
    w.add_layer_norm_rms_eps(eps); w.add_layer_norm_eps(eps)
    w.add_file_type(1)
    if arch == 'gemma2':
        w.add_sliding_window(c['sliding_window'])
        w.add_attn_logit_softcapping(c.get('attn_logit_softcapping') or 50.0)
        w.add_final_logit_softcapping(c.get('final_logit_softcapping') or 30.0)
    if arch in ('gemma3',) and c.get('sliding_window'):
        w.add_sliding_window(c['sliding_window'])
    if arch == 'olmo2' and c.get('sliding_window'):
        w.add_sliding_window(c['sliding_window'])
    if arch == 'phi3' and c.get('sliding_window'):
        w.add_sliding_window(c['sliding_window'])
    if arch == 'mistral3' and c.get('rope_parameters', {}).get('llama_4_scaling_beta') is not None:
        rp = c['rope_parameters']  # conversion/mistral3.py Ministral3Model; the loader needs n_ctx_orig_yarn
        w.add_attn_temperature_scale(rp['llama_4_scaling_beta'])
        w.add_rope_scaling_orig_ctx_len(rp['original_max_position_embeddings'])
    if arch == 'gpt-oss':
        w.add_sliding_window(c['sliding_window'])
        w.add_expert_count(c['num_local_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
        w.add_expert_feed_forward_length(ff)
    if arch == 'glm-dsa' and 'indexer_types' in c:  # GLM-5.2: full indexer layers, the others reuse their top-k
        w.add_array('glm-dsa.attention.indexer.types', [1 if k == 'full' else 0 for k in c['indexer_types'][:L]])
    if arch in ('deepseek32', 'glm-dsa'):  # conversion/deepseek.py DeepseekV32Model: DeepseekV2Model + the indexer
        w.add_indexer_head_count(c['index_n_heads']); w.add_indexer_key_length(c['index_head_dim'])
        w.add_indexer_top_k(c['index_topk'])
    if arch in ('deepseek2', 'deepseek32', 'glm-dsa'):  # convert_hf_to_gguf.py DeepseekV2Model: MLA as MQA with 576 / 512 heads
        kvr, rope, nope, vd = c['kv_lora_rank'], c['qk_rope_head_dim'], c['qk_nope_head_dim'], c['v_head_dim']
        w.add_head_count_kv(1)
        if c.get('q_lora_rank'): w.add_q_lora_rank(c['q_lora_rank'])
        w.add_kv_lora_rank(kvr); w.add_key_length(kvr + rope); w.add_value_length(kvr)
        w.add_key_length_mla(nope + rope); w.add_value_length_mla(vd)
        w.add_leading_dense_block_count(c.get('first_k_dense_replace', 0))
        w.add_expert_feed_forward_length(c['moe_intermediate_size'])
        w.add_expert_count(c['n_routed_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
        w.add_expert_shared_count(c.get('n_shared_experts', 0))
        if c.get('routed_scaling_factor') is not None: w.add_expert_weights_scale(c['routed_scaling_factor'])
        if c.get('norm_topk_prob'): w.add_expert_weights_norm(True)
        if c.get('n_group') is not None: w.add_expert_group_count(c['n_group'])
        if c.get('topk_group') is not None: w.add_expert_group_used_count(c['topk_group'])
        if c.get('scoring_func'):
            w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID if c['scoring_func'] == 'sigmoid' else gguf.ExpertGatingFuncType.SOFTMAX)
    if arch == 'glm4moe':  # conversion/glm.py Glm4MoeModel
        w.add_rope_dimension_count(int(hd * c.get('partial_rotary_factor', 0.5)))
        w.add_expert_count(c['n_routed_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
        w.add_expert_feed_forward_length(c['moe_intermediate_size']); w.add_expert_shared_count(c.get('n_shared_experts', 0))
        w.add_leading_dense_block_count(c.get('first_k_dense_replace', 0))
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
        if c.get('routed_scaling_factor') is not None: w.add_expert_weights_scale(c['routed_scaling_factor'])
        if c.get('norm_topk_prob') is not None: w.add_expert_weights_norm(c['norm_topk_prob'])
    if arch == 'ernie4_5-moe':  # conversion/ernie.py Ernie4_5MoeModel
        w.add_expert_count(c['moe_num_experts']); w.add_expert_used_count(c['moe_k'])
        w.add_interleave_moe_layer_step(c['moe_layer_interval']); w.add_leading_dense_block_count(c['moe_layer_start_index'])
        w.add_expert_feed_forward_length(c['moe_intermediate_size']); w.add_expert_shared_count(c['moe_num_shared_experts'])
        w.add_expert_shared_feed_forward_length(c['intermediate_size'] // nkv)
    if arch == 'minimax-m2':  # conversion/minimax.py MiniMaxM2Model + TextModel's gating
        w.add_expert_count(c['num_local_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
        w.add_expert_feed_forward_length(ff); w.add_rope_dimension_count(c['rotary_dim'])
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    if arch == 'llama4':  # conversion/llama.py Llama4Model: the dense FFN is intermediate_size_mlp
        ff = c['intermediate_size_mlp']; w.add_feed_forward_length(ff)
        w.add_interleave_moe_layer_step(c['interleave_moe_layer_step'])
        w.add_expert_feed_forward_length(c['intermediate_size'])
        w.add_expert_count(c['num_local_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
    if arch in ('qwen2vl', 'qwen3vl', 'qwen3vlmoe'):
        w.add_rope_dimension_sections(list(c['rope_scaling']['mrope_section']) + [0])
    if arch in ('qwen3vl', 'qwen3vlmoe'):  # conversion/qwen3vl.py: the deepstack levels of the vision tower
        w.add_num_deepstack_layers(len(c.get('vision_config', {}).get('deepstack_visual_indexes', [])))
    if arch == 'llama' and c.get('num_local_experts'):
        w.add_expert_count(c['num_local_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
    if arch in ('qwen2moe', 'qwen3moe', 'qwen3vlmoe'):
        w.add_expert_count(c['num_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
        w.add_expert_feed_forward_length(c['moe_intermediate_size'])
        if arch == 'qwen2moe': w.add_expert_shared_feed_forward_length(c['shared_expert_intermediate_size'])
    # tokenizer: an SPM vocabulary of V dummy pieces (only its size matters to the buffers)
    if arch in ('nemotron_h', 'nemotron_h_moe'):  # conversion/nemotron.py NemotronHModel (GraniteHybridModel's ssm keys)
        pat = c['hybrid_override_pattern'][:L]
        if arch == 'nemotron_h':
            w.add_feed_forward_length([ff if k == '-' else 0 for k in pat])
        else:  # routed experts in the E layers
            fe = c['moe_intermediate_size']
            w.add_feed_forward_length([fe if k == 'E' else 0 for k in pat])
            w.add_expert_used_count(c['num_experts_per_tok']); w.add_expert_feed_forward_length(fe)
            w.add_expert_shared_feed_forward_length(c['moe_shared_expert_intermediate_size'])
            w.add_expert_count(c['n_routed_experts']); w.add_expert_shared_count(c['n_shared_experts'])
            w.add_expert_weights_norm(c['norm_topk_prob']); w.add_expert_weights_scale(c['routed_scaling_factor'])
            w.add_expert_group_count(c['n_group'])
            if c.get('moe_latent_size'): w.add_moe_latent_size(c['moe_latent_size'])  # Nemotron-3 Super
        w.add_head_count_kv([nkv if k == '*' else 0 for k in pat])
        hd = c.get('head_dim') or c['attention_head_dim']; w.add_key_length(hd); w.add_value_length(hd)
        w.add_ssm_conv_kernel(c['conv_kernel']); w.add_ssm_state_size(c['ssm_state_size'])
        w.add_ssm_group_count(c['n_groups']); w.add_ssm_inner_size(c['mamba_num_heads'] * c['mamba_head_dim'])
        w.add_ssm_time_step_rank(c['mamba_num_heads'])
    if arch == 'granitehybrid':  # conversion/granite.py GraniteHybridModel (GraniteMoeModel + Mamba-2 keys)
        kinds = c['layer_types'][:L]
        w.add_head_count_kv([nkv if k == 'attention' else 0 for k in kinds])
        w.add_ssm_conv_kernel(c['mamba_d_conv']); w.add_ssm_state_size(c['mamba_d_state'])
        w.add_ssm_group_count(c['mamba_n_groups']); w.add_ssm_inner_size(c['mamba_expand'] * h)
        w.add_ssm_time_step_rank(c['mamba_n_heads'])
        w.add_rope_scaling_finetuned(False); w.add_context_length(2 ** 20)  # no RoPE in a hybrid (use_rope)
        for key, add in (('embedding_multiplier', w.add_embedding_scale), ('residual_multiplier', w.add_residual_scale),
                         ('attention_multiplier', w.add_attention_scale), ('logits_scaling', w.add_logit_scale)):
            if c.get(key): add(c[key])
        if c.get('num_local_experts'):
            w.add_expert_count(c['num_local_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
        if c.get('shared_intermediate_size'): w.add_expert_shared_feed_forward_length(c['shared_intermediate_size'])
    if arch in ('qwen35', 'qwen35moe', 'qwen3next'):  # conversion/qwen.py Qwen3NextModel (Qwen3_5TextModel / Qwen3_5MoeTextModel)
        w.add_ssm_conv_kernel(c['linear_conv_kernel_dim']); w.add_ssm_state_size(c['linear_key_head_dim'])
        w.add_ssm_group_count(c['linear_num_key_heads']); w.add_ssm_time_step_rank(c['linear_num_value_heads'])
        w.add_ssm_inner_size(c['linear_value_head_dim'] * c['linear_num_value_heads'])
        w.add_full_attention_interval(c.get('full_attention_interval', 4))
        if arch != 'qwen3next': w.add_rope_dimension_sections([11, 11, 10, 0])  # _Qwen35MRopeMixin's default
        if c.get('mtp_num_hidden_layers'):  # _QwenMtpMixin: the MTP block as one more block, nextn_predict_layers
            w.add_block_count(L + 1); w.add_nextn_predict_layers(1)
        if arch in ('qwen35moe', 'qwen3next'):
            w.add_expert_count(c['num_experts']); w.add_expert_used_count(c['num_experts_per_tok'])
            w.add_expert_feed_forward_length(c['moe_intermediate_size'])
            w.add_expert_shared_feed_forward_length(c['shared_expert_intermediate_size'])
    if arch == 'jamba':  # conversion/jamba.py JambaModel: KV heads only on the attention layers
        a_off, a_per = c.get('attn_layer_offset', 4), c.get('attn_layer_period', 8)
        w.add_head_count_kv([nkv if l >= a_off and (l - a_off) % a_per == 0 else 0 for l in range(L)])
        dt_rank = c.get('mamba_dt_rank', 'auto'); dt_rank = -(h // -16) if dt_rank == 'auto' else dt_rank
        w.add_ssm_conv_kernel(c.get('mamba_d_conv', 4)); w.add_ssm_inner_size(c.get('mamba_expand', 2) * h)
        w.add_ssm_state_size(c.get('mamba_d_state', 16)); w.add_ssm_time_step_rank(dt_rank)
        w.add_expert_count(c.get('num_experts', 16)); w.add_expert_used_count(c.get('num_experts_per_tok', 2))
    if arch == 'falcon-h1':  # conversion/falcon_h1.py FalconH1Model (Mamba2Model's ssm keys, attention in every layer)
        w.add_ssm_conv_kernel(c['mamba_d_conv']); w.add_ssm_state_size(c['mamba_d_state'])
        w.add_ssm_group_count(c['mamba_n_groups']); w.add_ssm_inner_size(c.get('mamba_d_ssm') or c['mamba_expand'] * h)
        w.add_ssm_time_step_rank(c['mamba_n_heads'])
    if arch == 'gemma4':  # conversion/gemma.py Gemma4Model.set_gguf_parameters (over Gemma3Model's)
        types = c.get('layer_types') or ['full_attention' if (l + 1) % 6 == 0 else 'sliding_attention' for l in range(c['num_hidden_layers'])]
        types = types[:L][:-1] + ['full_attention']  # Gemma4TextConfig.__post_init__: the last layer is full
        swa = [k == 'sliding_attention' for k in types]
        ghd = c.get('global_head_dim', 512); gkv = c.get('num_global_key_value_heads') or nkv
        rp = c.get('rope_parameters', {})
        w.add_key_length(ghd); w.add_value_length(ghd); w.add_key_length_swa(hd); w.add_value_length_swa(hd)
        w.add_head_count_kv([nkv if s else gkv for s in swa])  # the full layers' heads (k_eq_v or not: convert writes them)
        w.add_sliding_window(c['sliding_window']); w.add_sliding_window_pattern(swa)
        w.add_shared_kv_layers(c.get('num_kv_shared_layers', 0)); w.add_embedding_length_per_layer_input(c.get('hidden_size_per_layer_input') or 0)
        w.add_rope_freq_base(rp.get('full_attention', {}).get('rope_theta', 1e6))
        w.add_rope_freq_base_swa(rp.get('sliding_attention', {}).get('rope_theta', 1e4))
        w.add_rope_dimension_count(ghd); w.add_rope_dimension_count_swa(hd)
        if c.get('final_logit_softcapping'): w.add_final_logit_softcapping(c['final_logit_softcapping'])
        if c.get('enable_moe_block'):
            w.add_expert_count(c['num_experts']); w.add_expert_used_count(c['top_k_experts'])
            w.add_expert_feed_forward_length(c['moe_intermediate_size'])
    w.add_tokenizer_model('llama')
    toks = ['<unk>', '<s>', '</s>'] + [f'<0x{i:02X}>' for i in range(256)]
    toks += [f't{i}' for i in range(V - len(toks))]
    w.add_token_list(toks); w.add_token_scores([0.0] * V)
    w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (V - 259))
    F16, F32 = np.float16, np.float32
    def t(name, ne, dt=F16):  # ne in ggml order
        w.add_tensor(name, np.zeros(tuple(reversed(ne)), dtype=dt))
    def mamba2(b, I, G, N, Hs, K, conv_bias, norm=True):  # mamba-base.cpp's tensors: conv kernel F32 as convert keeps it
        t(b + 'ssm_in.weight', [h, 2 * I + 2 * G * N + Hs])
        t(b + 'ssm_conv1d.weight', [K, I + 2 * G * N], F32)
        if conv_bias: t(b + 'ssm_conv1d.bias', [I + 2 * G * N], F32)
        t(b + 'ssm_dt.bias', [Hs], F32); t(b + 'ssm_a', [1, Hs], F32); t(b + 'ssm_d', [1, Hs], F32)
        if norm: t(b + 'ssm_norm.weight', [I // G, G], F32)
        t(b + 'ssm_out.weight', [I, h])
    t('token_embd.weight', [h, V]); t('output_norm.weight', [h], F32)
    if arch == 'phi2': t('output_norm.bias', [h], F32)
    if not tied: t('output.weight', [h, V])
    if arch == 'phi2': t('output.bias', [V], F32)
    if arch in ('nemotron_h', 'nemotron_h_moe'):  # nemotron-h.cpp load_arch_tensors: M = Mamba-2, * = attention, - = MLP, E = MoE
        I, G, N, Hs, K = c['mamba_num_heads'] * c['mamba_head_dim'], c['n_groups'], c['ssm_state_size'], c['mamba_num_heads'], c['conv_kernel']
        for l, kind in enumerate(c['hybrid_override_pattern'][:L]):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            if kind == 'M':
                mamba2(b, I, G, N, Hs, K, c.get('use_conv_bias', True))
            elif kind == '*':
                t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
                t(b + 'attn_output.weight', [hd * nh, h])
            elif kind == 'E':
                E, fe, fs = c['n_routed_experts'], c['moe_intermediate_size'], c['moe_shared_expert_intermediate_size'] * c['n_shared_experts']
                he = c.get('moe_latent_size') or h  # a latent MoE's experts run on moe_latent_size
                t(b + 'ffn_gate_inp.weight', [h, E], F32); t(b + 'exp_probs_b.bias', [E], F32)
                t(b + 'ffn_up_exps.weight', [he, fe, E]); t(b + 'ffn_down_exps.weight', [fe, he, E])
                if he != h: t(b + 'ffn_latent_down.weight', [h, he]); t(b + 'ffn_latent_up.weight', [he, h])
                t(b + 'ffn_up_shexp.weight', [h, fs]); t(b + 'ffn_down_shexp.weight', [fs, h])
            else:
                t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
    if arch == 'granitehybrid':  # granite-hybrid.cpp load_arch_tensors; the experts' and shared MLP's gate / up split
        I, G, N, Hs, K = c['mamba_expand'] * h, c['mamba_n_groups'], c['mamba_d_state'], c['mamba_n_heads'], c['mamba_d_conv']
        E, fs = c.get('num_local_experts', 0), c.get('shared_intermediate_size', 0)
        for l, kind in enumerate(c['layer_types'][:L]):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            if kind == 'mamba':
                mamba2(b, I, G, N, Hs, K, c.get('mamba_conv_bias', True))
            else:
                t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
                t(b + 'attn_output.weight', [hd * nh, h])
            t(b + 'ffn_norm.weight', [h], F32)
            if E:
                t(b + 'ffn_gate_inp.weight', [h, E], F32)
                t(b + 'ffn_gate_exps.weight', [h, ff, E]); t(b + 'ffn_up_exps.weight', [h, ff, E]); t(b + 'ffn_down_exps.weight', [ff, h, E])
                if fs:
                    t(b + 'ffn_gate_shexp.weight', [h, fs]); t(b + 'ffn_up_shexp.weight', [h, fs]); t(b + 'ffn_down_shexp.weight', [fs, h])
            else:
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
    if arch == 'jamba':  # jamba.cpp load_arch_tensors: Mamba-1 or attention, then experts or a SwiGLU FFN
        I, N, K = c.get('mamba_expand', 2) * h, c.get('mamba_d_state', 16), c.get('mamba_d_conv', 4)
        R = c.get('mamba_dt_rank', 'auto'); R = -(h // -16) if R == 'auto' else R
        a_off, a_per = c.get('attn_layer_offset', 4), c.get('attn_layer_period', 8)
        e_off, e_per, E = c.get('expert_layer_offset', 1), c.get('expert_layer_period', 2), c.get('num_experts', 16)
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            if l >= a_off and (l - a_off) % a_per == 0:
                t(b + 'attn_q.weight', [h, h]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
                t(b + 'attn_output.weight', [h, h])
            else:  # the converter keeps 1-D tensors, the conv kernel and A (no .weight suffix) F32
                t(b + 'ssm_in.weight', [h, 2 * I]); t(b + 'ssm_conv1d.weight', [K, I], F32)
                if c.get('mamba_conv_bias', True): t(b + 'ssm_conv1d.bias', [I], F32)
                t(b + 'ssm_x.weight', [I, R + 2 * N]); t(b + 'ssm_dt_norm.weight', [R], F32)
                t(b + 'ssm_dt.weight', [R, I]); t(b + 'ssm_dt.bias', [I], F32)
                t(b + 'ssm_b_norm.weight', [N], F32); t(b + 'ssm_c_norm.weight', [N], F32)
                t(b + 'ssm_a', [N, I], F32); t(b + 'ssm_d', [I], F32); t(b + 'ssm_out.weight', [I, h])
            t(b + 'ffn_norm.weight', [h], F32)
            if E > 1 and l >= e_off and (l - e_off) % e_per == 0:
                t(b + 'ffn_gate_inp.weight', [h, E], F32)
                t(b + 'ffn_gate_exps.weight', [h, ff, E]); t(b + 'ffn_down_exps.weight', [ff, h, E]); t(b + 'ffn_up_exps.weight', [h, ff, E])
            else:
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h]); t(b + 'ffn_up.weight', [h, ff])
    if arch == 'falcon-h1':  # falcon-h1.cpp load_arch_tensors: Mamba-2 and attention side by side, then a SwiGLU MLP
        I, G, N, Hs, K = c.get('mamba_d_ssm') or c['mamba_expand'] * h, c['mamba_n_groups'], c['mamba_d_state'], c['mamba_n_heads'], c['mamba_d_conv']
        for l in range(L):
            b = f'blk.{l}.'
            mamba2(b, I, G, N, Hs, K, c.get('mamba_conv_bias', True), c.get('mamba_rms_norm', False))
            t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
            t(b + 'attn_output.weight', [hd * nh, h]); t(b + 'attn_norm.weight', [h], F32)
            t(b + 'ffn_norm', [h], F32)  # no .weight: convert's map matches pre_ff_layernorm.weight whole (FFN_PRE_NORM)
            t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
    if arch in ('qwen35', 'qwen35moe', 'qwen3next'):  # qwen35.cpp / qwen35moe.cpp / qwen3next.cpp: every 4th layer attention
        N, G, Hv, K = c['linear_key_head_dim'], c['linear_num_key_heads'], c['linear_num_value_heads'], c['linear_conv_kernel_dim']
        kd, vd = N * G, c['linear_value_head_dim'] * Hv
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32); t(b + 'post_attention_norm.weight', [h], F32)
            if (l + 1) % c.get('full_attention_interval', 4) == 0:
                t(b + 'attn_q.weight', [h, hd * nh * 2]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
                t(b + 'attn_output.weight', [hd * nh, h])
                t(b + 'attn_q_norm.weight', [hd], F32); t(b + 'attn_k_norm.weight', [hd], F32)
            else:
                t(b + 'attn_qkv.weight', [h, 2 * kd + vd]); t(b + 'attn_gate.weight', [h, vd])
                t(b + 'ssm_conv1d.weight', [K, 2 * kd + vd], F32)
                t(b + 'ssm_dt.bias', [Hv], F32); t(b + 'ssm_a', [Hv], F32)
                if arch == 'qwen3next': t(b + 'ssm_ba.weight', [h, 2 * Hv])  # in_proj_ba, one tensor
                else: t(b + 'ssm_beta.weight', [h, Hv]); t(b + 'ssm_alpha.weight', [h, Hv])
                t(b + 'ssm_norm.weight', [c['linear_value_head_dim']], F32); t(b + 'ssm_out.weight', [vd, h])
            if arch in ('qwen35moe', 'qwen3next'):
                E, fe, fs = c['num_experts'], c['moe_intermediate_size'], c['shared_expert_intermediate_size']
                t(b + 'ffn_gate_inp.weight', [h, E], F32)
                t(b + 'ffn_gate_exps.weight', [h, fe, E]); t(b + 'ffn_up_exps.weight', [h, fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
                t(b + 'ffn_gate_inp_shexp.weight', [h], F32)
                t(b + 'ffn_gate_shexp.weight', [h, fs]); t(b + 'ffn_up_shexp.weight', [h, fs]); t(b + 'ffn_down_shexp.weight', [fs, h])
            else:
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
        if c.get('mtp_num_hidden_layers') and arch == 'qwen35':  # qwen35.cpp load_block_mtp (skipped unless load_mtp)
            b = f'blk.{L}.'
            t(b + 'attn_norm.weight', [h], F32); t(b + 'post_attention_norm.weight', [h], F32)
            t(b + 'attn_q.weight', [h, hd * nh * 2]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
            t(b + 'attn_output.weight', [hd * nh, h]); t(b + 'attn_q_norm.weight', [hd], F32); t(b + 'attn_k_norm.weight', [hd], F32)
            t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
            t(b + 'nextn.eh_proj.weight', [2 * h, h]); t(b + 'nextn.enorm.weight', [h], F32); t(b + 'nextn.hnorm.weight', [h], F32)
            t(b + 'nextn.shared_head_norm.weight', [h], F32)
    for l in range(L if arch not in ('jamba', 'falcon-h1', 'qwen35', 'qwen35moe', 'qwen3next', 'granitehybrid', 'nemotron_h', 'nemotron_h_moe', 'deepseek2', 'deepseek32', 'glm-dsa', 'glm4moe', 'llama4', 'minimax-m2', 'ernie4_5-moe', 'gptneox', 'falcon', 'gemma4') else 0):
        b = f'blk.{l}.'
        if arch != 'olmo2': t(b + 'attn_norm.weight', [h], F32)
        if arch == 'phi2': t(b + 'attn_norm.bias', [h], F32)
        if arch == 'phi3':
            t(b + 'attn_qkv.weight', [h, hd * (nh + 2 * nkv)])
        else:
            t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
        t(b + 'attn_output.weight', [hd * nh, h])
        if arch == 'phi2': t(b + 'attn_output.bias', [h], F32)
        if arch == 'gpt-oss':
            t(b + 'attn_output.bias', [h], F32); t(b + 'attn_sinks.weight', [nh], F32)
        if arch in ('qwen2', 'qwen2moe', 'phi2', 'qwen2vl', 'gpt-oss'):
            t(b + 'attn_q.bias', [hd * nh], F32); t(b + 'attn_k.bias', [hd * nkv], F32); t(b + 'attn_v.bias', [hd * nkv], F32)
        if arch in ('qwen3', 'qwen3moe', 'gemma3', 'qwen3vl', 'qwen3vlmoe'):
            t(b + 'attn_q_norm.weight', [hd], F32); t(b + 'attn_k_norm.weight', [hd], F32)
        if arch == 'olmo2':
            t(b + 'attn_q_norm.weight', [hd * nh], F32); t(b + 'attn_k_norm.weight', [hd * nkv], F32)
        if arch in ('gemma2', 'gemma3', 'olmo2'):
            t(b + 'post_attention_norm.weight', [h], F32); t(b + 'post_ffw_norm.weight', [h], F32)
        if arch == 'gpt-oss': t(b + 'post_attention_norm.weight', [h], F32)  # the FFN's pre-norm
        elif arch not in ('olmo2', 'phi2'): t(b + 'ffn_norm.weight', [h], F32)
        if arch == 'llama' and c.get('num_local_experts'):
            E = c['num_local_experts']
            t(b + 'ffn_gate_inp.weight', [h, E], F32)
            t(b + 'ffn_gate_exps.weight', [h, ff, E]); t(b + 'ffn_up_exps.weight', [h, ff, E]); t(b + 'ffn_down_exps.weight', [ff, h, E])
        elif arch == 'gpt-oss':  # biased router and experts (src/models/openai-moe.cpp)
            E = c['num_local_experts']
            t(b + 'ffn_gate_inp.weight', [h, E], F32); t(b + 'ffn_gate_inp.bias', [E], F32)
            for n, ne in (('gate', [h, ff, E]), ('up', [h, ff, E]), ('down', [ff, h, E])):
                t(b + f'ffn_{n}_exps.weight', ne); t(b + f'ffn_{n}_exps.bias', [ne[1], E], F32)
        elif arch == 'phi2':
            t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_up.bias', [ff], F32); t(b + 'ffn_down.weight', [ff, h]); t(b + 'ffn_down.bias', [h], F32)
        elif arch in ('qwen2moe', 'qwen3moe', 'qwen3vlmoe'):
            E = c['num_experts']; fe = c['moe_intermediate_size']
            t(b + 'ffn_gate_inp.weight', [h, E], F32)
            t(b + 'ffn_gate_exps.weight', [h, fe, E]); t(b + 'ffn_up_exps.weight', [h, fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
            if arch == 'qwen2moe':
                fs = c['shared_expert_intermediate_size']
                t(b + 'ffn_gate_inp_shexp.weight', [h], F32)
                t(b + 'ffn_gate_shexp.weight', [h, fs]); t(b + 'ffn_up_shexp.weight', [h, fs]); t(b + 'ffn_down_shexp.weight', [fs, h])
        elif arch == 'phi3':
            t(b + 'ffn_up.weight', [h, 2 * ff]); t(b + 'ffn_down.weight', [ff, h])
        else:
            t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
    if arch == 'gemma4':  # src/models/gemma4.cpp load_arch_tensors; names from conversion/gemma.py Gemma4Model
        t('rope_freqs.weight', [ghd // 2], F32)  # generate_extra_tensors: the proportional rope's factors (full layers)
        k_eq_v = c.get('attention_k_eq_v', False)
        for l in range(L):
            b = f'blk.{l}.'; d, kv = (hd, nkv) if swa[l] else (ghd, gkv if k_eq_v else nkv)
            t(b + 'attn_norm.weight', [h], F32)
            t(b + 'attn_q.weight', [h, nh * d]); t(b + 'attn_k.weight', [h, kv * d])
            if swa[l] or not k_eq_v: t(b + 'attn_v.weight', [h, kv * d])  # k_eq_v full layers: V is K's projection
            t(b + 'attn_output.weight', [nh * d, h])
            t(b + 'attn_q_norm.weight', [d], F32); t(b + 'attn_k_norm.weight', [d], F32)
            t(b + 'post_attention_norm.weight', [h], F32); t(b + 'layer_output_scale.weight', [1], F32)
            t(b + 'ffn_norm.weight', [h], F32); t(b + 'post_ffw_norm.weight', [h], F32)
            t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
            if c.get('enable_moe_block'):  # router.proj / .scale / .per_expert_scale, experts.gate_up_proj / down_proj
                E, fe = c['num_experts'], c['moe_intermediate_size']
                t(b + 'ffn_gate_inp.weight', [h, E], F32); t(b + 'ffn_gate_inp.scale', [h], F32)
                t(b + 'pre_ffw_norm_2.weight', [h], F32); t(b + 'post_ffw_norm_1.weight', [h], F32); t(b + 'post_ffw_norm_2.weight', [h], F32)
                t(b + 'ffn_gate_up_exps.weight', [h, 2 * fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
                t(b + 'ffn_down_exps.scale', [E], F32)
    if arch in ('gptneox', 'falcon'):  # LayerNorms with biases, fused wqkv, a GELU MLP
        bias = arch == 'gptneox'
        t('output_norm.bias', [h], F32)
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32); t(b + 'attn_norm.bias', [h], F32)
            if arch == 'falcon' and 'n_head_kv' in c:  # Falcon-40B: ln_attn
                t(b + 'attn_norm_2.weight', [h], F32); t(b + 'attn_norm_2.bias', [h], F32)
            t(b + 'attn_qkv.weight', [h, hd * (nh + 2 * nkv)]); t(b + 'attn_output.weight', [hd * nh, h])
            if bias:
                t(b + 'attn_qkv.bias', [hd * (nh + 2 * nkv)], F32); t(b + 'attn_output.bias', [h], F32)
                t(b + 'ffn_norm.weight', [h], F32); t(b + 'ffn_norm.bias', [h], F32)
            t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
            if bias: t(b + 'ffn_up.bias', [ff], F32); t(b + 'ffn_down.bias', [h], F32)
    if arch == 'ernie4_5-moe':
        E, fe, fs = c['moe_num_experts'], c['moe_intermediate_size'], c['intermediate_size'] // nkv
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
            t(b + 'attn_output.weight', [hd * nh, h]); t(b + 'ffn_norm.weight', [h], F32)
            if l < c['moe_layer_start_index'] or (l + 1) % c['moe_layer_interval'] != 0:
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
                continue
            t(b + 'ffn_gate_inp.weight', [h, E], F32); t(b + 'exp_probs_b.bias', [E], F32)
            t(b + 'ffn_gate_exps.weight', [h, fe, E]); t(b + 'ffn_up_exps.weight', [h, fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
            t(b + 'ffn_gate_shexp.weight', [h, fs]); t(b + 'ffn_up_shexp.weight', [h, fs]); t(b + 'ffn_down_shexp.weight', [fs, h])
    if arch == 'minimax-m2':
        E = c['num_local_experts']
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
            t(b + 'attn_q_norm.weight', [hd * nh], F32); t(b + 'attn_k_norm.weight', [hd * nkv], F32)
            t(b + 'attn_output.weight', [hd * nh, h]); t(b + 'ffn_norm.weight', [h], F32)
            t(b + 'ffn_gate_inp.weight', [h, E], F32); t(b + 'exp_probs_b.bias', [E], F32)
            t(b + 'ffn_gate_exps.weight', [h, ff, E]); t(b + 'ffn_up_exps.weight', [h, ff, E]); t(b + 'ffn_down_exps.weight', [ff, h, E])
    if arch == 'llama4':
        E, fe, step = c['num_local_experts'], c['intermediate_size'], c['interleave_moe_layer_step']
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
            t(b + 'attn_output.weight', [hd * nh, h]); t(b + 'ffn_norm.weight', [h], F32)
            if (l + 1) % step == 0:
                t(b + 'ffn_gate_inp.weight', [h, E], F32)
                t(b + 'ffn_gate_exps.weight', [h, fe, E]); t(b + 'ffn_up_exps.weight', [h, fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
                t(b + 'ffn_gate_shexp.weight', [h, fe]); t(b + 'ffn_up_shexp.weight', [h, fe]); t(b + 'ffn_down_shexp.weight', [fe, h])
            else:
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
    if arch == 'glm4moe':
        E, fe, ns = c['n_routed_experts'], c['moe_intermediate_size'], c.get('n_shared_experts', 0)
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            t(b + 'attn_q.weight', [h, hd * nh]); t(b + 'attn_k.weight', [h, hd * nkv]); t(b + 'attn_v.weight', [h, hd * nkv])
            if c.get('attention_bias'):
                t(b + 'attn_q.bias', [hd * nh], F32); t(b + 'attn_k.bias', [hd * nkv], F32); t(b + 'attn_v.bias', [hd * nkv], F32)
            t(b + 'attn_output.weight', [hd * nh, h])
            if c.get('use_qk_norm'): t(b + 'attn_q_norm.weight', [hd], F32); t(b + 'attn_k_norm.weight', [hd], F32)
            t(b + 'post_attention_norm.weight', [h], F32)
            if l < c.get('first_k_dense_replace', 0):
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
                continue
            t(b + 'ffn_gate_inp.weight', [h, E], F32); t(b + 'exp_probs_b.bias', [E], F32)
            t(b + 'ffn_gate_exps.weight', [h, fe, E]); t(b + 'ffn_up_exps.weight', [h, fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
            if ns:
                t(b + 'ffn_gate_shexp.weight', [h, fe * ns]); t(b + 'ffn_up_shexp.weight', [h, fe * ns]); t(b + 'ffn_down_shexp.weight', [fe * ns, h])
    if arch in ('deepseek2', 'deepseek32', 'glm-dsa'):
        qr, kvr = c.get('q_lora_rank'), c['kv_lora_rank']
        rope, nope, vd = c['qk_rope_head_dim'], c['qk_nope_head_dim'], c['v_head_dim']
        E, fe, ns = c['n_routed_experts'], c['moe_intermediate_size'], c.get('n_shared_experts', 0)
        for l in range(L):
            b = f'blk.{l}.'
            t(b + 'attn_norm.weight', [h], F32)
            if qr:
                t(b + 'attn_q_a.weight', [h, qr]); t(b + 'attn_q_a_norm.weight', [qr], F32)
                t(b + 'attn_q_b.weight', [qr, nh * (nope + rope)])
            else:
                t(b + 'attn_q.weight', [h, nh * (nope + rope)])
            t(b + 'attn_kv_a_mqa.weight', [h, kvr + rope]); t(b + 'attn_kv_a_norm.weight', [kvr], F32)
            t(b + 'attn_k_b.weight', [nope, kvr, nh]); t(b + 'attn_v_b.weight', [kvr, vd, nh])
            t(b + 'attn_output.weight', [nh * vd, h]); t(b + 'ffn_norm.weight', [h], F32)
            if arch in ('deepseek32', 'glm-dsa') and c.get('indexer_types', ['full'] * L)[l] == 'full':  # the lightning indexer
                ih, inh = c['index_head_dim'], c['index_n_heads']
                t(b + 'indexer.k_norm.weight', [ih], F32); t(b + 'indexer.k_norm.bias', [ih], F32)
                t(b + 'indexer.proj.weight', [h, inh]); t(b + 'indexer.attn_k.weight', [h, ih])
                t(b + 'indexer.attn_q_b.weight', [qr, inh * ih])
            if l < c.get('first_k_dense_replace', 0):
                t(b + 'ffn_gate.weight', [h, ff]); t(b + 'ffn_up.weight', [h, ff]); t(b + 'ffn_down.weight', [ff, h])
                continue
            t(b + 'ffn_gate_inp.weight', [h, E], F32)
            if c.get('topk_method') == 'noaux_tc': t(b + 'exp_probs_b.bias', [E], F32)
            t(b + 'ffn_gate_exps.weight', [h, fe, E]); t(b + 'ffn_up_exps.weight', [h, fe, E]); t(b + 'ffn_down_exps.weight', [fe, h, E])
            if ns:
                t(b + 'ffn_gate_shexp.weight', [h, fe * ns]); t(b + 'ffn_up_shexp.weight', [h, fe * ns]); t(b + 'ffn_down_shexp.weight', [fe * ns, h])
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else None)
