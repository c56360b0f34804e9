package dev.drover.httpapi;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A client's one key and certificate chain, presented to every server that asks whatever issuers it names: agents
 * name none, as they pin certificates rather than trust a CA. Used for the gateway's certificate and for an agent's
 * own when it claims a disk from another node.
 */
public final class FixedKeyManager extends X509ExtendedKeyManager {

    private final String alias;
    private final PrivateKey key;
    private final X509Certificate[] chain;

    public FixedKeyManager(String alias, PrivateKey key, X509Certificate[] chain) {
        this.alias = alias;
        this.key = key;
        this.chain = chain.clone();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return keyType.equals(key.getAlgorithm()) ? new String[] {alias} : null;
    }

    @Override
    public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
        return List.of(keyTypes).contains(key.getAlgorithm()) ? alias : null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
        return chooseClientAlias(keyTypes, issuers, null);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return this.alias.equals(alias) ? chain.clone() : null;
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return this.alias.equals(alias) ? key : null;
    }
}
