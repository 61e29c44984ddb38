// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "../contracts/IReputationRegistry.sol";
import "./IdentityRegistry.sol";

/// A test Reputation Registry with the rules of ERC-8004: a score of at most
/// 100, an agent that exists, no feedback from its owner, approved address
/// or operators; feedback indexed from 1 per (agent, client), revocable by
/// its client, summarised over clients and tags. Written for the tests.
contract ReputationRegistry is IReputationRegistry {
    struct Feedback {
        uint8 score;
        string tag1;
        string tag2;
        bool isRevoked;
    }

    IdentityRegistry private immutable _identity;
    mapping(uint256 => mapping(address => Feedback[])) private _feedback;
    mapping(uint256 => address[]) private _clients;
    mapping(uint256 => mapping(address => bool)) private _isClient;

    constructor(address identityRegistry) {
        require(identityRegistry != address(0), "no identity registry");
        _identity = IdentityRegistry(identityRegistry);
    }

    function getIdentityRegistry() external view returns (address) { return address(_identity); }

    function giveFeedback(
        uint256 agentId,
        uint8 score,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        require(score <= 100, "score>100");
        // ownerOf reverts for an agent that does not exist.
        require(!_identity.isAuthorizedOrOwner(msg.sender, agentId), "self-feedback not allowed");
        _feedback[agentId][msg.sender].push(Feedback(score, tag1, tag2, false));
        if (!_isClient[agentId][msg.sender]) {
            _isClient[agentId][msg.sender] = true;
            _clients[agentId].push(msg.sender);
        }
        uint64 index = uint64(_feedback[agentId][msg.sender].length);
        emit NewFeedback(agentId, msg.sender, index, score, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash);
    }

    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        Feedback storage f = _at(agentId, msg.sender, feedbackIndex);
        require(!f.isRevoked, "already revoked");
        f.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return uint64(_feedback[agentId][clientAddress].length);
    }

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (uint8 score, string memory tag1, string memory tag2, bool isRevoked)
    {
        Feedback storage f = _at(agentId, clientAddress, feedbackIndex);
        return (f.score, f.tag1, f.tag2, f.isRevoked);
    }

    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, uint8 averageScore)
    {
        address[] memory clients = _clients[agentId];
        if (clientAddresses.length > 0) {
            clients = clientAddresses;
        }
        uint256 total;
        for (uint256 i = 0; i < clients.length; i++) {
            Feedback[] storage fs = _feedback[agentId][clients[i]];
            for (uint256 j = 0; j < fs.length; j++) {
                if (fs[j].isRevoked || !_matches(fs[j].tag1, tag1) || !_matches(fs[j].tag2, tag2)) {
                    continue;
                }
                total += fs[j].score;
                count++;
            }
        }
        averageScore = count == 0 ? 0 : uint8(total / count);
    }

    function getClients(uint256 agentId) external view returns (address[] memory) { return _clients[agentId]; }

    function _at(uint256 agentId, address client, uint64 feedbackIndex) private view returns (Feedback storage) {
        require(feedbackIndex > 0 && feedbackIndex <= _feedback[agentId][client].length, "index out of bounds");
        return _feedback[agentId][client][feedbackIndex - 1];
    }

    /// An empty filter matches every tag.
    function _matches(string storage have, string calldata want) private view returns (bool) {
        return bytes(want).length == 0 || keccak256(bytes(have)) == keccak256(bytes(want));
    }
}
